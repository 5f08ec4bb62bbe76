package escouade_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// hostPID returns the pid that /proc (the test's, the Host's) gives the
// process that a test plugin knows as pid: its own (os.Getpid) or a
// child's (Process.Pid). A plugin that is, or is below, the init of a pid
// namespace knows the namespace's numbers, which /proc does not show;
// outside any namespace, the two are the same.
func hostPID(pid int) int {
	if pid == os.Getpid() {
		// /proc/self is this process, as /proc numbers it.
		if self, err := os.Readlink("/proc/self"); err == nil {
			if n, err := strconv.Atoi(self); err == nil {
				return n
			}
		}
		return pid
	}
	own, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return pid
	}
	// A child: the process of this namespace whose last NSpid (its pid
	// in the namespace it was born in, this one) is pid.
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ns, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err != nil || ns != own {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range bytes.Lines(status) {
			if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
				f := strings.Fields(string(rest))
				if len(f) > 0 && f[len(f)-1] == strconv.Itoa(pid) {
					return n
				}
			}
		}
	}
	return pid
}

// hostPIDsScript is a shell line's start that sets $hostpid to the shell's
// own pid as /proc numbers it, and $hostkids to those of its children: a
// shell's $$ and $! are its pid namespace's numbers.
const hostPIDsScript = `read hostpid _ </proc/self/stat; read hostkids </proc/self/task/$hostpid/children; `
