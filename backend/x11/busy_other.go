//go:build !linux

package x11

import "time"

// cpuDemand cannot tell outside Linux.
func cpuDemand(pid int) (time.Duration, bool) { return 0, false }
