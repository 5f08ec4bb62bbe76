//go:build linux

package procfs

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Stat
	}{
		{"42 (sh) S 1 42 42 0 -1 4194560", Stat{PID: 42, Comm: "sh", State: 'S', PPID: 1, PGID: 42}},
		// A command name may hold spaces and parentheses.
		{"7 (a) b (c)) Z 3 5 5 0", Stat{PID: 7, Comm: "a) b (c)", State: 'Z', PPID: 3, PGID: 5}},
		{"9 () R 0 0 0", Stat{PID: 9, Comm: "", State: 'R', PPID: 0, PGID: 0}},
		{"12 (a) R (b) S 1 12", Stat{PID: 12, Comm: "a) R (b", State: 'S', PPID: 1, PGID: 12}},
	} {
		got, err := ParseStat([]byte(tc.line))
		if err != nil || got != tc.want {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
	for state, busy := range map[byte]bool{'R': true, 'D': true, 'S': false, 'Z': false, 'I': false} {
		if got := (Stat{State: state}).Busy(); got != busy {
			t.Errorf("state %c: Busy = %v", state, got)
		}
	}
	for _, bad := range []string{"", "42", "42 (sh", "(sh) S 1 2", "x (sh) S 1 2", "42 (sh) S", "42 (sh) S 1", "42 (sh) SS 1 2", "0()\x00 0 0", "42 (sh) S x 2", "42 (sh) S 1 y"} {
		if _, err := ParseStat([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseStat(%q): %v, want ErrMalformed", bad, err)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (sh) S 1 42 42 0 -1"))
	f.Add([]byte("7 (a) b (c)) Z 3 5 5"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStat(b)
		if err != nil {
			return
		}
		if s.State == 0 || len(s.Comm) > len(b) {
			t.Fatalf("accepted %q as %+v", b, s)
		}
	})
}

func TestSelf(t *testing.T) {
	self, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.PPID != os.Getppid() || !self.Live() || !Alive(os.Getpid()) {
		t.Errorf("this process reads %+v (parent %d)", self, os.Getppid())
	}
	args, err := Cmdline(os.Getpid())
	if err != nil || !slices.Equal(args, os.Args) {
		t.Errorf("Cmdline = %q, %v; want %q", args, err, os.Args)
	}
	if kb, err := KiB(os.Getpid(), "status", "VmRSS:"); err != nil || kb <= 0 {
		t.Errorf("VmRSS = %d, %v", kb, err)
	}
	if _, err := KiB(os.Getpid(), "status", "NoSuchLine:"); err == nil {
		t.Error("a line not there reads without error")
	}
	if Alive(-1) {
		t.Error("pid -1 is alive")
	}
}

// TestBelow starts a shell that starts a sleep, and finds both below this
// process, by the parents of every process and by the children lists.
func TestBelow(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & echo started; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the shell and its sleep
		cmd.Wait()
	}()
	buf := make([]byte, 8)
	if _, err := out.Read(buf); err != nil { // the sleep was forked
		t.Fatal(err)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	below, err := Descendants(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(below, cmd.Process.Pid) {
		t.Fatalf("the shell %d is not among %v", cmd.Process.Pid, below)
	}
	var sleep int
	for _, s := range all {
		if s.PPID == cmd.Process.Pid { // "sleep", or "sh" until its exec
			sleep = s.PID
		}
	}
	if sleep == 0 || !slices.Contains(below, sleep) {
		t.Fatalf("no sleep below the shell among %v", below)
	}
	if got := Find(below, "sh", "; wait"); got != cmd.Process.Pid {
		t.Errorf(`Find(sh, "; wait") = %d, want the shell %d`, got, cmd.Process.Pid)
	}
	if got := Find(below, "sh", "no such argument"); got != 0 {
		t.Errorf("Find of no argument = %d", got)
	}
	if got := Find(below, "s", "; wait"); got != 0 {
		t.Errorf("Find of a program named by a part of its name = %d", got)
	}
	tree := Tree(cmd.Process.Pid, 10)
	if !slices.Equal(tree, []int{cmd.Process.Pid, sleep}) {
		t.Errorf("Tree = %v, want [%d %d]", tree, cmd.Process.Pid, sleep)
	}
	if got := Tree(cmd.Process.Pid, 1); !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Errorf("Tree with max 1 = %v", got)
	}
	if Tree(-1, 10) != nil || Tree(1<<30, 10) != nil {
		t.Error("Tree of no process is not nil")
	}
}
