//go:build unix && !linux

package contain

import "time"

// limitSelf bounds the engine's CPU time: RLIMIT_AS is not enforced on
// every system, so memory is bounded only by the runtime's soft limit.
func LimitSelf(memory int64, cpu time.Duration) error { return limitCPU(cpu) }
