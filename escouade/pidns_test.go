package escouade_test

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// A test plugin that is, or is below, the init of a pid namespace knows
// the namespace's pids, and with the private mounts (the default) a /proc
// of the namespace's own, where the test's pids are not: what it reports
// is a reference (pidRef), which the test turns into its own /proc's pid
// (hostPID).

// pidRef names, for the test's side, the process that a test plugin knows
// as pid: its own (os.Getpid) or a child's (Process.Pid). It is that pid
// and the pid namespace that numbers it, "<pid>@pid:[<inode>]"; where no
// namespace can be read, the pid alone.
func pidRef(pid int) string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return strconv.Itoa(pid)
	}
	return strconv.Itoa(pid) + "@" + ns
}

// pidRefLine matches a line that is one reference (pidRef).
var pidRefLine = regexp.MustCompile(`^[0-9]+(@pid:\[[0-9]+\])?\n?$`)

// hostPID returns the pid that this process's /proc gives the live
// process ref names (pidRef), or 0.
func hostPID(ref string) int {
	n, ns, ok := strings.Cut(strings.TrimSpace(ref), "@")
	if !ok {
		pid, _ := strconv.Atoi(n)
		return pid
	}
	return pidInNamespace(ns, n)
}

// pidInNamespace returns the pid that this process's /proc gives the live
// process of the pid namespace ns ("pid:[<inode>]") whose pid there, its
// last NSpid, is n; or 0.
func pidInNamespace(ns, n string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if own, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err != nil || own != ns {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range bytes.Lines(status) {
			if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
				if f := strings.Fields(string(rest)); len(f) > 0 && f[len(f)-1] == n {
					return pid
				}
			}
		}
	}
	return 0
}

// hostPIDs returns the pids hostPID gives each of the space-separated
// references in refs; false when one names no live process.
func hostPIDs(refs string) ([]int, bool) {
	var pids []int
	for _, ref := range strings.Fields(refs) {
		pid := hostPID(ref)
		if pid <= 0 {
			return nil, false
		}
		pids = append(pids, pid)
	}
	return pids, true
}

// procPID returns the pid that a test plugin's own /proc gives the process
// it knows as pid (its own, a child's, its namespace's init): what a
// plugin that reads its /proc would try to signal. With a /proc of the
// namespace's own, that is pid; with the machine's, another number.
func procPID(pid int) int {
	if pid == os.Getpid() {
		// /proc/self is this process, as /proc numbers it.
		if self, err := os.Readlink("/proc/self"); err == nil {
			if n, err := strconv.Atoi(self); err == nil {
				return n
			}
		}
		return pid
	}
	if own, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		if n := pidInNamespace(own, strconv.Itoa(pid)); n > 0 {
			return n
		}
	}
	return pid
}

// hostPIDsScript is a shell line's start that sets $hostpid to a
// reference to the shell itself, and $hostkids to references to its
// children, for hostPIDs: a shell's $$ and $!, and the numbers of a /proc
// of its namespace's own, are its namespace's, which the test's /proc does
// not show. Where its /proc numbers it as $$ does, the references are the
// numbers and its namespace (pidRef's); where they differ, /proc is the
// test's, and the numbers are its own.
const hostPIDsScript = `read hostpid _ </proc/self/stat; read hostkids </proc/self/task/$hostpid/children; ` +
	`if [ "$hostpid" = $$ ]; then ns=@$(readlink /proc/self/ns/pid); hostpid=$hostpid$ns; k=; ` +
	`for c in $hostkids; do k="$k $c$ns"; done; hostkids=${k# }; fi; `
