//go:build unix

package escouade

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// engineSupported: an isolated engine can run here.
const engineSupported = true

// limitCPU bounds the process's CPU time to cpu beyond what it used, in
// whole seconds, soft and hard alike: the kernel kills it there.
func limitCPU(cpu time.Duration) error {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	secs := uint64((used + cpu + time.Second - 1) / time.Second)
	if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: secs, Max: secs}); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	return nil
}
