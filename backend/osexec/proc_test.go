//go:build linux

package osexec_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A procStat is the part of /proc/<pid>/stat the tests look at.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
}

// readStat parses /proc/<pid>/stat; ok is false once the process is gone.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold anything, so the
	// fields are counted from the last closing one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return procStat{}, false
	}
	st := procStat{pid: pid, state: f[0][0]}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgrp, _ = strconv.Atoi(f[2])
	return st, true
}

// allProcs lists every process the test can see.
func allProcs() []procStat {
	ents, _ := os.ReadDir("/proc")
	var ps []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			ps = append(ps, st)
		}
	}
	return ps
}

// liveMembers returns the processes of group pgrp that are not zombies.
func liveMembers(pgrp int) []procStat {
	var live []procStat
	for _, p := range allProcs() {
		if p.pgrp == pgrp && p.state != 'Z' && p.state != 'X' {
			live = append(live, p)
		}
	}
	return live
}

// children returns the child processes of the test binary, zombies
// included: after a test, there must be none.
func children() []procStat {
	var kids []procStat
	me := os.Getpid()
	for _, p := range allProcs() {
		if p.ppid == me {
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
	if !ok || st.state != 'S' {
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
