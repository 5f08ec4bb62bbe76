//go:build linux

package osexec_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/procfs"
)

// readStat reads pid's stat line; ok is false once the process is gone.
func readStat(pid int) (procfs.Stat, bool) {
	st, err := procfs.ReadStat(pid)
	return st, err == nil
}

// allProcs lists every process the test can see.
func allProcs() []procfs.Stat {
	all, _ := procfs.All()
	return all
}

// liveMembers returns the processes of group pgrp that are not zombies.
func liveMembers(pgrp int) []procfs.Stat {
	var live []procfs.Stat
	for _, p := range allProcs() {
		if p.PGID == pgrp && p.Live() {
			live = append(live, p)
		}
	}
	return live
}

// children returns the child processes of the test binary, zombies
// included: after a test, there must be none.
func children() []procfs.Stat {
	var kids []procfs.Stat
	me := os.Getpid()
	for _, p := range allProcs() {
		if p.PPID == me {
			kids = append(kids, p)
		}
	}
	return kids
}

// groupDies waits until no live process is left in group pgrp, failing the
// test if some survive: a SIGKILLed process takes a moment to finish
// exiting after its pipes have closed.
func groupDies(t *testing.T, pgrp int) {
	t.Helper()
	waitFor(t, 5*time.Second, "group "+strconv.Itoa(pgrp)+" to die", func() bool {
		return len(liveMembers(pgrp)) == 0
	})
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// blockedInSyscall reports whether pid is asleep inside system call nr.
func blockedInSyscall(pid, nr int) bool {
	st, ok := readStat(pid)
	if !ok || st.State != 'S' {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 0 && f[0] == strconv.Itoa(nr)
}

// bytesWritten returns the wchar count of /proc/<pid>/io.
func bytesWritten(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no wchar in /proc/<pid>/io")
	return 0
}

// command returns the pid of the command an Executor started as p: p
// itself, or the only child of its init where the command runs in a pid
// namespace of its own.
func command(t *testing.T, e *osexec.Executor, p *osexec.Process) int {
	t.Helper()
	if !e.Contained() {
		return p.Pid()
	}
	var pid int
	waitFor(t, 10*time.Second, "the init's child", func() bool {
		for _, s := range allProcs() {
			if s.PPID == p.Pid() {
				pid = s.PID
				return true
			}
		}
		return false
	})
	return pid
}
