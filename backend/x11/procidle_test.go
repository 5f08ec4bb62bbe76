package x11

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/internal/procfs"
)

// TestInputPathRest starts a sleeping child and a spinning one: the tree
// of this process holds both, the sleeper's main thread rests and the
// spinner's does not.
func TestInputPathRest(t *testing.T) {
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The whole group: a shell's sleep too.
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		return cmd
	}
	sleeper := start("sleep", "60")
	spinner := start("sh", "-c", "while :; do :; done")
	self := os.Getpid()
	tree := procfs.Tree(self, maxSources)
	if !slices.Contains(tree, sleeper.Process.Pid) || !slices.Contains(tree, spinner.Process.Pid) {
		t.Fatalf("procfs.Tree(%d) = %v, without the children %d and %d", self, tree, sleeper.Process.Pid, spinner.Process.Pid)
	}
	var spin inputPath
	spin.add(spinner.Process.Pid)
	if len(spin.tasks) != 1 || spin.rest[0] {
		t.Errorf("the spinner's input path is %+v, not its main thread looked at for work now", spin)
	} else if _, busy := spin.sample(); !busy {
		t.Error("the spinner's main thread is not busy")
	}
	// Between fork and exec, and while it loads, the sleeper runs; then it
	// rests, and its runs stay the same. As a child of this process, its
	// main thread must rest.
	var path inputPath
	path.add(self)
	i := slices.Index(path.tasks, "/proc/"+strconv.Itoa(sleeper.Process.Pid)+"/task/"+strconv.Itoa(sleeper.Process.Pid)+"/")
	if i < 0 || !path.rest[i] {
		t.Fatalf("the sleeper's main thread is not on this process's input path, to rest: %+v", path)
	}
	sleep := inputPath{tasks: path.tasks[i : i+1], rest: path.rest[i : i+1]}
	deadline := time.Now().Add(30 * time.Second)
	for {
		before, busy := sleep.sample()
		time.Sleep(20 * time.Millisecond) // the span the sleeper must rest
		after, _ := sleep.sample()
		if !busy && slices.Equal(before, after) && before[0] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a child in sleep(1) never rested: %q then %q", before, after)
		}
	}
	gone := inputPath{tasks: []string{"/proc/0/task/0/"}, rest: []bool{true}}
	if s, busy := gone.sample(); busy || s[0] != "" {
		t.Error("a thread gone is busy or has runs")
	}
	// Not "sleep 60" alone: the shell would run it in its own place.
	helper := start("sh", "-c", "sleep 60; exit 0", "--type=utility")
	// Start returns once the child is in execve, before the new program's
	// arguments are in place: until then its command line reads empty.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if args, _ := procfs.Cmdline(helper.Process.Pid); len(args) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // waiting for the kernel; nothing to select on
	}
	if !helperProcess(helper.Process.Pid) || helperProcess(sleeper.Process.Pid) {
		t.Error("helperProcess tells a browser's helpers wrongly")
	}
}
