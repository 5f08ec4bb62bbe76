//go:build unix

package contain

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// LimitsSupported: an isolated engine can run here.
const LimitsSupported = true

// limitCPU bounds the process's CPU time to cpu beyond what it used, in
// whole seconds, soft and hard alike: the kernel kills it there.
func limitCPU(cpu time.Duration) error {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	secs := uint64((used + cpu + time.Second - 1) / time.Second)
	var rl unix.Rlimit
	setBoth(&rl.Cur, &rl.Max, secs)
	if err := unix.Setrlimit(unix.RLIMIT_CPU, &rl); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	return nil
}

// setBoth sets a limit's soft and hard values, whatever their integer type
// on this system.
func setBoth[T ~int64 | ~uint64](soft, hard *T, v uint64) {
	*soft, *hard = T(v), T(v)
}
