package hosttool_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/internal/citest"

	"shinken.dev/go/internal/hosttool"
)

// TestSweepCommands lays out what a killed daemon and live ones leave in
// a temporary folder: only the folders of commands no process holds go.
func TestSweepCommands(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, hpid string) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if hpid != "" {
			os.WriteFile(filepath.Join(d, "hpid"), []byte(hpid+"\n"), 0o600)
		}
		os.WriteFile(filepath.Join(d, "o.0"), []byte("output"), 0o600)
		return d
	}
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Fields(string(self[strings.LastIndexByte(string(self), ')')+1:]))[19]

	dead := mk("shinken-cmd.Dead0000", "999999999 1")                               // its holder is gone
	reused := mk("shinken-cmd.Reused00", "1 1")                                     // pid 1 runs, started at another time
	holder := mk("shinken-cmd.Holder00", strings.Fields(string(self))[0]+" "+start) // this process holds it
	cwd := mk("shinken-cmd.Cwd00000", "999999999 1")                                // a process works in it
	open := mk("shinken-cmd.Open0000", "999999999 1")                               // a process has its file open
	setup := mk("shinken-cmd.Setup000", "")                                         // a start not yet done
	ended := mk("shinken-cmd.Ended000", "999999999 1")                              // ended lately: a session may read it still
	os.WriteFile(filepath.Join(ended, "exit"), []byte("killed\n"), 0o600)
	old := mk("shinken-cmd.Old00000", "999999999 1") // ended over an hour ago
	os.WriteFile(filepath.Join(old, "exit"), []byte("0\n"), 0o600)
	if err := os.Chtimes(filepath.Join(old, "exit"), time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	other := mk("not-a-command", "")
	target := mk("target", "")
	if err := os.Symlink(target, filepath.Join(dir, "shinken-cmd.Link0000")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(open, "o.0"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sleeper := exec.Command("sleep", "1000")
	sleeper.Dir = cwd
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sleeper.Process.Kill()
		sleeper.Wait()
	}()

	removed, err := hosttool.SweepCommands(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{dead, old, reused}; !slices.Equal(removed, want) {
		t.Fatalf("removed %q, want %q", removed, want)
	}
	for _, d := range []string{holder, cwd, open, setup, ended, other, target, filepath.Join(target, "o.0")} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	for _, d := range removed {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", d, err)
		}
	}
	if _, err := hosttool.SweepCommands(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing folder swept without an error")
	}
}

// TestSweepOtherOwners: the folders of commands and shells that ran as the
// agent's user go too when the sweep is told that user, and never
// otherwise; a folder whose hpid is a fifo or a link does not stall the
// sweep, and a folder with more files than a holder leaves is left alone.
func TestSweepOtherOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		citest.Skip(t, "giving a folder to another user needs root")
	}
	const agent = 65534
	dir := t.TempDir()
	mk := func(name string, uid int) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "o.0"), []byte("output"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
		return d
	}
	shell := mk("shinken-shell.Shell000", 0) // a shell's folder, its holder gone
	os.WriteFile(filepath.Join(shell, "hpid"), []byte("999999999\n"), 0o600)
	agentCmd := mk("shinken-cmd.Agent000", agent) // a command of the agent's user
	os.WriteFile(filepath.Join(agentCmd, "hpid"), []byte("999999999 1\n"), 0o600)
	fifo := mk("shinken-cmd.Fifo0000", agent) // its hpid a fifo no one writes
	if err := syscall.Mkfifo(filepath.Join(fifo, "hpid"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := mk("shinken-cmd.Link0000", agent) // its hpid a link to this process's stat
	os.Symlink("/proc/self/stat", filepath.Join(link, "hpid"))
	crowded := mk("shinken-cmd.Crowded0", agent) // not as a holder leaves it
	os.WriteFile(filepath.Join(crowded, "hpid"), []byte("999999999 1\n"), 0o600)
	for i := range 100 {
		os.WriteFile(filepath.Join(crowded, fmt.Sprint(i)), nil, 0o600)
	}
	stranger := mk("shinken-cmd.Strange0", agent+1) // another user's
	os.WriteFile(filepath.Join(stranger, "hpid"), []byte("999999999 1\n"), 0o600)

	// Without the agent's uid, only this process's own go.
	removed, err := hosttool.SweepCommands(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{shell}; !slices.Equal(removed, want) {
		t.Fatalf("removed %q, want %q", removed, want)
	}
	removed, err = hosttool.SweepCommands(dir, agent)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{agentCmd, fifo, link}; !slices.Equal(removed, want) {
		t.Fatalf("removed %q, want %q", removed, want)
	}
	for _, d := range []string{crowded, stranger} {
		if _, err := os.Stat(filepath.Join(d, "o.0")); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
