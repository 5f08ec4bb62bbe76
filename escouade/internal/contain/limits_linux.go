package contain

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// limitSelf bounds the engine's process, before it loads any plugin code:
// its address space may grow by memory beyond what it maps now (the
// runtime's reservations, and the race detector's shadow, are already
// mapped), and its CPU time reach cpu beyond what it used. Both limits are
// hard: past the first the kernel refuses memory (the runtime's fatal out
// of memory), past the second it sends SIGKILL.
func LimitSelf(memory int64, cpu time.Duration) error {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return fmt.Errorf("the address space: %w", err)
	}
	f := bytes.Fields(statm)
	if len(f) == 0 {
		return fmt.Errorf("the address space: /proc/self/statm is empty")
	}
	pages, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err != nil {
		return fmt.Errorf("the address space: %w", err)
	}
	as := pages*uint64(os.Getpagesize()) + uint64(memory)
	if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}); err != nil {
		return fmt.Errorf("RLIMIT_AS: %w", err)
	}
	return limitCPU(cpu)
}
