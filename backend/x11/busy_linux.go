package x11

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuDemand returns how much processor time the process pid and its
// descendants have used or waited for so far, from /proc/PID/schedstat
// (time on a CPU and time runnable on a run queue, in nanoseconds; the
// main thread of each process, which in a browser is the one that
// navigates, parses and lays out). ok is false when /proc cannot tell.
func cpuDemand(pid int) (d time.Duration, ok bool) {
	seen := 0
	var walk func(pid int)
	walk = func(pid int) {
		if seen > 256 {
			return
		}
		seen++
		p := strconv.Itoa(pid)
		if b, err := os.ReadFile("/proc/" + p + "/schedstat"); err == nil {
			f := strings.Fields(string(b))
			if len(f) >= 2 {
				run, _ := strconv.ParseInt(f[0], 10, 64)
				wait, _ := strconv.ParseInt(f[1], 10, 64)
				d += time.Duration(run + wait)
				ok = true
			}
		}
		b, err := os.ReadFile("/proc/" + p + "/task/" + p + "/children")
		if err != nil {
			return
		}
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				walk(n)
			}
		}
	}
	walk(pid)
	return d, ok
}
