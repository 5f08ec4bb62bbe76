// Package procfs reads processes from Linux's /proc: one process's stat
// line, every process, and the processes below one.
//
// What it reads can change between two reads (a process forks, exits, is
// reparented): callers that need a stable answer read again until it is.
// On a system with no /proc every call fails or finds nothing.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Root is where the proc file system is mounted.
const Root = "/proc"

// A Stat is the part of a /proc/<pid>/stat line (or a thread's, under
// task/) that callers here use.
type Stat struct {
	PID   int
	Comm  string // the command name, at most 15 bytes, any byte but NUL
	State byte   // R running, S sleeping, D disk wait, Z zombie, X dead, …
	PPID  int
	PGID  int
}

// Live reports whether the process has not exited: neither a zombie
// waiting for its parent nor dead.
func (s Stat) Live() bool { return s.State != 'Z' && s.State != 'X' }

// Busy reports whether the process or thread is running or runnable (R),
// or in an uninterruptible wait (D).
func (s Stat) Busy() bool { return s.State == 'R' || s.State == 'D' }

// ErrMalformed is returned for a stat line that cannot be read.
var ErrMalformed = errors.New("procfs: malformed stat line")

// ParseStat reads a stat line: "pid (comm) state ppid pgrp …". The
// command name is in parentheses and may hold any byte, ')' and spaces
// included, so the fields after it are found from its last ')'.
func ParseStat(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	close := bytes.LastIndexByte(b, ')')
	if open < 1 || close < open {
		return Stat{}, ErrMalformed
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Stat{}, ErrMalformed
	}
	f := bytes.Fields(b[close+1:])
	if len(f) < 3 || len(f[0]) != 1 || !isLetter(f[0][0]) {
		return Stat{}, ErrMalformed
	}
	s := Stat{PID: pid, Comm: string(b[open+1 : close]), State: f[0][0]}
	if s.PPID, err = strconv.Atoi(string(f[1])); err != nil {
		return Stat{}, ErrMalformed
	}
	if s.PGID, err = strconv.Atoi(string(f[2])); err != nil {
		return Stat{}, ErrMalformed
	}
	return s, nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// ReadStat reads the stat line of process pid.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile(Root + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	s, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("%w: process %d", err, pid)
	}
	return s, nil
}

// Alive reports whether pid is a process that has not exited (a zombie
// has; a pid /proc does not list has too).
func Alive(pid int) bool {
	s, err := ReadStat(pid)
	return err == nil && s.Live()
}

// All reads the stat line of every process /proc lists. Processes that
// exit while it reads are left out.
func All() ([]Stat, error) {
	pids, err := PIDs()
	if err != nil {
		return nil, err
	}
	out := make([]Stat, 0, len(pids))
	for _, pid := range pids {
		if s, err := ReadStat(pid); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// PIDs lists the processes /proc has a folder for.
func PIDs() ([]int, error) {
	ents, err := os.ReadDir(Root)
	if err != nil {
		return nil, fmt.Errorf("procfs: %w", err)
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// Descendants returns the processes below pid (not pid itself), found by
// following each process's parent down from pid, from one read of every
// process. It sees every process, whichever of its parent's threads
// started it.
func Descendants(pid int) ([]int, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, s := range all {
		children[s.PPID] = append(children[s.PPID], s.PID)
	}
	// The lines are read one after another, so a pid reused meanwhile
	// could close a loop: each process is taken once.
	seen := map[int]bool{pid: true}
	var below []int
	for next := []int{pid}; len(next) > 0; {
		p := next[len(next)-1]
		next = next[:len(next)-1]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				below = append(below, c)
				next = append(next, c)
			}
		}
	}
	return below, nil
}

// Tree returns pid followed by its descendants, at most max processes,
// read from the children lists of pid's threads and theirs
// (/proc/<pid>/task/<tid>/children), without reading every process. It
// returns nil when pid is not a process /proc lists.
func Tree(pid, max int) []int {
	if pid <= 0 {
		return nil
	}
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < max; i++ {
		dir := Root + "/" + strconv.Itoa(out[i]) + "/task/"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			if i == 0 {
				return nil
			}
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(dir + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil && len(out) < max {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// Cmdline returns the arguments process pid was started with (empty for
// a kernel thread or a zombie).
func Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(Root + "/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// KiB returns the figure, in KiB, of the line of /proc/<pid>/<file> that
// starts with key: "VmRSS:" in "status" for the resident set, "Pss:" in
// "smaps_rollup" for the proportional one.
func KiB(pid int, file, key string) (int64, error) {
	b, err := os.ReadFile(Root + "/" + strconv.Itoa(pid) + "/" + file)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("procfs: %s of process %d: %w", key, pid, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("procfs: no %s in %s of process %d", key, file, pid)
}

// Find returns the first of pids that runs program (its first argument,
// or that argument's last path element, is program) with an argument
// ending in suffix, or 0.
func Find(pids []int, program, suffix string) int {
	for _, pid := range pids {
		args, _ := Cmdline(pid)
		if len(args) == 0 || (args[0] != program && !strings.HasSuffix(args[0], "/"+program)) {
			continue
		}
		for _, a := range args[1:] {
			if strings.HasSuffix(a, suffix) {
				return pid
			}
		}
	}
	return 0
}
