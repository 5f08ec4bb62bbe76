//go:build unix && !linux

package escouade

import "time"

// engineIsolation says what bounds an isolated engine's process on this
// system.
const engineIsolation = "CPU time (RLIMIT_CPU), set by the kernel; memory only by the runtime's soft limit, RLIMIT_AS not being enforced everywhere"

// limitSelf bounds the engine's CPU time; see engineIsolation.
func limitSelf(memory int64, cpu time.Duration) error { return limitCPU(cpu) }
