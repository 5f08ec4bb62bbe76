package x11

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestBusyState(t *testing.T) {
	for _, c := range []struct {
		stat string
		busy bool
	}{
		{"12 (chromium) S 1 12 12 0", false},
		{"12 (chromium) R 1 12 12 0", true},
		{"12 (dd) D 1 12 12 0", true},
		{"12 (a) R (b) S 1 12", false}, // the name is "a) R (b"
		{"12 (odd) ", false},
		{"garbage", false},
	} {
		if got := busyState([]byte(c.stat)); got != c.busy {
			t.Errorf("busyState(%q) = %v, want %v", c.stat, got, c.busy)
		}
	}
	if !onInputPath([]byte("40 (Chrome_ChildIOT) S 1")) || onInputPath([]byte("40 (DedicatedWorker) S 1")) {
		t.Error("onInputPath tells the input threads wrongly")
	}
}

// TestInputPathRest starts a sleeping child and a spinning one: the tree
// of this process holds both, the sleeper's main thread rests and the
// spinner's does not.
func TestInputPathRest(t *testing.T) {
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	sleeper := start("sleep", "60")
	spinner := start("sh", "-c", "while :; do :; done")
	self := os.Getpid()
	tree := procTree(self)
	if !slices.Contains(tree, sleeper.Process.Pid) || !slices.Contains(tree, spinner.Process.Pid) {
		t.Fatalf("procTree(%d) = %v, without the children %d and %d", self, tree, sleeper.Process.Pid, spinner.Process.Pid)
	}
	if path := inputPath([]int{spinner.Process.Pid}); len(path) != 1 {
		t.Errorf("the spinner's input path is %v, not its main thread", path)
	} else if _, busy := sampleThreads(path); !busy {
		t.Error("the spinner's main thread is not busy")
	}
	// Between fork and exec, and while it loads, the sleeper runs; then it
	// rests, and its runs stay the same.
	path := inputPath([]int{sleeper.Process.Pid})
	if len(path) != 1 {
		t.Fatalf("the sleeper's input path is %v, not its main thread", path)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		before, busy := sampleThreads(path)
		time.Sleep(20 * time.Millisecond) // the span the sleeper must rest
		after, _ := sampleThreads(path)
		if !busy && slices.Equal(before, after) && before[0] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a child in sleep(1) never rested: %q then %q", before, after)
		}
	}
	if s, busy := sampleThreads([]string{"/proc/0/task/0/"}); busy || s[0] != "" {
		t.Error("a thread gone is busy or has runs")
	}
	if procTree(-1) != nil || procTree(1<<30) != nil {
		t.Error("procTree of no process is not empty")
	}
}
