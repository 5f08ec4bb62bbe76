package hosttool_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/hosttool"
)

const testNonce = "0123456789abcdef"

// liveShell is a shell started by ShellStart's script, run here as the
// runtime would run it, and its output.
type liveShell struct {
	t   *testing.T
	dir string
	cwd string // the folder it started in
	mu  sync.Mutex
	out []byte
	got chan struct{} // closed and renewed at each read of output
}

func startShell(t *testing.T, shell string) *liveShell {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "/bin/sh", hosttool.ShellStart.Argv(shell, "80", "24", testNonce)[1:]...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	dir, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	s := &liveShell{t: t, dir: strings.TrimSpace(dir), cwd: cwd, got: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			s.mu.Lock()
			s.out = append(s.out, buf[:n]...)
			close(s.got)
			s.got = make(chan struct{})
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		s.run(hosttool.ShellControl, "close", "", "")
		cancel()
		<-done
		cmd.Wait()
	})
	s.prompts(1)
	return s
}

// prompts waits until the shell has printed n primary prompts in all.
func (s *liveShell) prompts(n int) {
	s.t.Helper()
	marker := []byte("\x1b]777;" + testNonce + ";")
	deadline := time.After(time.Minute) // a hang guard: the prompt is the signal
	for {
		s.mu.Lock()
		seen := bytes.Count(s.out, marker) - bytes.Count(s.out, append(marker, "more"...))
		ch := s.got
		s.mu.Unlock()
		if seen >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			s.t.Fatalf("%d prompts not seen in %q", n, s.out)
		}
	}
}

func (s *liveShell) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.out)
}

// run runs a tool script on the shell's folder and answers its exit
// status and standard error.
func (s *liveShell) run(script *hosttool.Script, args ...string) (int, string) {
	code, _, stderr := s.runOut(script, args...)
	return code, stderr
}

// runOut is run, answering standard output too.
func (s *liveShell) runOut(script *hosttool.Script, args ...string) (code int, stdout, stderr string) {
	argv := script.Argv(append([]string{s.dir}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// foreground waits until the terminal's foreground process group is not
// the shell's: the program the last line started has the terminal.
func (s *liveShell) foregroundTaken() {
	s.t.Helper()
	hpid, err := os.ReadFile(filepath.Join(s.dir, "hpid"))
	if err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // a hang guard
	for {
		stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(hpid)) + "/stat")
		if err != nil {
			s.t.Fatal(err)
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if f[2] != f[5] { // pgrp, tpgid
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatal("the shell kept the terminal")
		}
		time.Sleep(5 * time.Millisecond) // polling the terminal's foreground group
	}
}

// TestShellLineForeground types lines with ShellLine, as the runtime runs
// it: a line reaches the shell when it reads a command line, and is
// refused, with nothing typed, when a program it started has the terminal
// (exit 5, naming it), when the shell itself reads the line for something
// else (read, exit 6: the foreground alone would not tell), and at a shell
// that is not /bin/sh (exit 7). The environment keeps git's pager and
// editor off the terminal.
func TestShellLineForeground(t *testing.T) {
	citest.NeedPrograms(t, "script", "flock", "git")
	s := startShell(t, "/bin/sh")
	// noclobber does not keep the prompt from marking itself ready.
	if code, stderr := s.run(hosttool.ShellLine, "set -C; echo typed-$((6*7))\n", s.cwd); code != 0 {
		t.Fatalf("a line at the prompt: exit %d %s", code, stderr)
	}
	s.prompts(2)
	if !strings.Contains(s.output(), "typed-42") {
		t.Fatalf("the line did not run: %q", s.output())
	}

	// cat has the terminal: the next line would be cat's input.
	if code, stderr := s.run(hosttool.ShellLine, "cat\n", s.cwd); code != 0 {
		t.Fatalf("cat: exit %d %s", code, stderr)
	}
	s.foregroundTaken()
	for {
		// The shell's child has the terminal, and becomes cat a moment
		// later: until then it is named as the shell's.
		code, stderr := s.run(hosttool.ShellLine, "echo to-cat\n", s.cwd)
		if code == 5 && strings.Contains(stderr, "a program the shell started runs in the foreground") {
			continue
		}
		if code != 5 || !strings.Contains(stderr, "cat runs in the foreground") {
			t.Fatalf("a line while cat runs: exit %d %q, want 5 naming cat", code, stderr)
		}
		break
	}
	if code, stderr := s.run(hosttool.ShellControl, "int", "", ""); code != 0 {
		t.Fatalf("interrupt: exit %d %s", code, stderr)
	}
	s.prompts(3)
	if strings.Contains(s.output(), "to-cat") {
		t.Fatalf("the refused line reached cat: %q", s.output())
	}

	// read is the shell's own: it keeps the terminal's foreground, yet the
	// line it reads is data, not a command line.
	if code, stderr := s.run(hosttool.ShellLine, "read x; echo \"read [$x]\"\n", s.cwd); code != 0 {
		t.Fatalf("read: exit %d %s", code, stderr)
	}
	if code, stderr := s.run(hosttool.ShellLine, "echo as-data\n", s.cwd); code != 6 || !strings.Contains(stderr, "not at its prompt") {
		t.Fatalf("a line while the shell runs read: exit %d %q, want 6", code, stderr)
	}
	if code, _ := s.run(hosttool.ShellType, "raw\n"); code != 0 {
		t.Fatal("raw typing failed")
	}
	s.prompts(4)
	if out := s.output(); !strings.Contains(out, "read [raw]") || strings.Contains(out, "as-data") {
		t.Fatalf("read got another line than the raw one: %q", out)
	}

	// git commit without -m opens no editor that reads the terminal, and
	// git log pages nothing.
	repo := t.TempDir()
	line := "cd " + repo + " && git init -q && git -c user.email=a@b -c user.name=a commit -q --allow-empty; echo commit-exit=$?\n"
	if code, stderr := s.run(hosttool.ShellLine, line, s.cwd); code != 0 {
		t.Fatalf("git commit: exit %d %s", code, stderr)
	}
	s.prompts(5)
	if out := s.output(); !strings.Contains(out, "commit-exit=1") || !strings.Contains(out, "editor") {
		t.Fatalf("git commit with no message: %q", out)
	}

	// An interrupt at the prompt prints it again, ready again, although
	// the last one's mark is still there (and noclobber is on).
	if code, stderr := s.run(hosttool.ShellControl, "int", "", ""); code != 0 {
		t.Fatalf("interrupt: exit %d %s", code, stderr)
	}
	s.prompts(6)
	if out := s.output(); strings.Contains(out, "cannot create") || strings.Contains(out, "exists") {
		t.Fatalf("the prompt failed to mark itself ready: %q", out)
	}
	// The git line moved the shell into the repository: a line judged in
	// the folder it started in is not typed, and the shell's folder is
	// answered (and, asked, the same).
	code, stdout, stderr := s.runOut(hosttool.ShellLine, "echo after-interrupt\n", s.cwd)
	realRepo, _ := filepath.EvalSymlinks(repo)
	if code != hosttool.LineMoved || stdout != realRepo+"\n" || !strings.Contains(stderr, "working folder") {
		t.Fatalf("a line judged in the folder the shell left: exit %d %q %q, want %d and %s", code, stdout, stderr, hosttool.LineMoved, realRepo)
	}
	if code, stdout, _ := s.runOut(hosttool.ShellControl, "cwd", "", ""); code != 0 || stdout != realRepo+"\n" {
		t.Fatalf("cwd: exit %d %q, want %s", code, stdout, realRepo)
	}
	if code, stderr := s.run(hosttool.ShellLine, "echo after-interrupt\n", repo); code != 0 {
		t.Fatalf("a line after an interrupt at the prompt: exit %d %s", code, stderr)
	}
	s.prompts(7)
	if strings.Count(s.output(), "after-interrupt") != 1 {
		t.Fatalf("the line judged in the folder the shell left ran: %q", s.output())
	}

	bash := startShell(t, "/bin/bash")
	if code, stderr := bash.run(hosttool.ShellLine, "echo hi\n", bash.cwd); code != 7 {
		t.Fatalf("a line at bash: exit %d %q, want 7", code, stderr)
	}
}

// TestShellLineIntent reads ShellLine back as its line, not dynamic, and
// refuses text that is not one command line.
func TestShellLineIntent(t *testing.T) {
	in, ok, err := hosttool.Recognize(hosttool.ShellLine.Argv(dir, "ls -l\n", "/home/u"), nil, nil)
	if !ok || err != nil || in.Tool != "shell" || in.Kind != "command" || in.Line != "ls -l\n" || in.Dir != "/home/u" || in.Dynamic || in.Interactive {
		t.Fatalf("%+v %v %v", in, ok, err)
	}
	in, _, _ = hosttool.Recognize(hosttool.ShellType.Argv(dir, "ls -l\n"), nil, nil)
	if !in.Dynamic {
		t.Fatalf("raw typing is not dynamic: %+v", in)
	}
	for name, line := range map[string]string{
		"no newline":  "ls",
		"two lines":   "ls\nrm -rf x\n",
		"cr":          "ls\rrm x\n",
		"erase":       "echo a\x7f\x7f\x7f\x7f\x7f\x7frm x\n",
		"kill line":   "echo safe\x15rm x\n",
		"end of file": "ls\x04rm x\n",
		"blank":       "  \n",
		"too long":    "echo " + strings.Repeat("a", hosttool.MaxLine) + "\n",
	} {
		if _, ok, err := hosttool.Recognize(hosttool.ShellLine.Argv(dir, line, "/home/u"), nil, nil); !ok || !errors.Is(err, hosttool.ErrNotALine) {
			t.Errorf("%s: recognized %v, error %v; want ErrNotALine", name, ok, err)
		}
	}
	if err := hosttool.CheckLine("printf 'a\\tb'\t# tab\n"); err != nil {
		t.Errorf("a tab: %v", err)
	}
}
