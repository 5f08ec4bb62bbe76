package machine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/proctest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/machine"
)

// readUntil reads the shell's output until it contains want (which the
// terminal's echo of the input must not contain).
func readUntil(t *testing.T, sh *machine.Shell, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var all strings.Builder
	for !strings.Contains(all.String(), want) {
		if err := sh.Wait(ctx); err != nil {
			t.Fatalf("waiting for %q: %v; got %q", want, err, all.String())
		}
		out, _ := sh.Read()
		all.WriteString(out)
	}
	return all.String()
}

// TestShell drives a shell across writes: its cwd and variables persist,
// it has a terminal, and Close ends it and its jobs.
func TestShell(t *testing.T) {
	c, deny := execRig(t)
	ctx := t.Context()
	dir := t.TempDir()
	sh, err := c.StartShell(ctx, &machine.ShellOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Write(ctx, "cd /tmp && X=42\n"); err != nil {
		t.Fatal(err)
	}
	if err := sh.Write(ctx, "echo \"at $(pwd) x=$X\"; [ -t 0 ] && echo on-a-\"t\"ty\n"); err != nil {
		t.Fatal(err)
	}
	out := readUntil(t, sh, "on-a-tty")
	if !strings.Contains(out, "at /tmp x=42") {
		t.Fatalf("the shell did not keep its state:\n%s", out)
	}
	// bash (the default) expands braces as its users expect, and leaves a
	// "!" as written (no history expansion: "event not found").
	if err := sh.Write(ctx, "echo brace-{a,b} bang!; echo done-\"\"x\n"); err != nil {
		t.Fatal(err)
	}
	if out := readUntil(t, sh, "done-x"); !strings.Contains(out, "brace-a brace-b bang!") {
		t.Fatalf("braces or a bang: %q", out)
	}
	if err := sh.Write(ctx, "sleep 1234.5 &\necho start\"\"ed\n"); err != nil {
		t.Fatal(err)
	}
	readUntil(t, sh, "started")
	deny.Store(true)
	if err := sh.Write(ctx, "echo refused\n"); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("a write the Authorizer refuses: %v", err)
	}
	deny.Store(false)
	if err := sh.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-sh.Done()
	if exit, err := sh.Exit(); exit == nil || err != nil {
		t.Fatalf("exit %+v, %v", exit, err)
	}
	if err := sh.Write(ctx, "echo late\n"); !errors.Is(err, machine.ErrShellEnded) {
		t.Fatalf("a write after Close: %v", err)
	}
	// The background job died with the shell.
	res, err := c.Exec(ctx, &aci.ExecRequest{Shell: "pgrep -f 'sleep 1234[.]5' || true"})
	if err != nil || strings.TrimSpace(res.Stdout) != "" {
		t.Fatalf("the shell's job outlived it: %q %v", res.Stdout, err)
	}
}

// TestShellExits sees a shell that exits by itself end.
func TestShellExits(t *testing.T) {
	c, _ := execRig(t)
	ctx := t.Context()
	sh, err := c.StartShell(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Write(ctx, "exit 3\n"); err != nil {
		t.Fatal(err)
	}
	<-sh.Done()
	if err := sh.Wait(ctx); !errors.Is(err, machine.ErrShellEnded) {
		sh.Read()
		if err := sh.Wait(ctx); !errors.Is(err, machine.ErrShellEnded) {
			t.Fatalf("wait after the end: %v", err)
		}
	}
	sh.Close(ctx)
}

// runShell runs line at sh and fails the test on an error.
func runShell(t *testing.T, sh *machine.Shell, line string, opts *machine.RunOptions) *machine.ShellResult {
	t.Helper()
	res, err := sh.Run(t.Context(), line, opts)
	if err != nil {
		t.Fatalf("Run(%q): %v", line, err)
	}
	return res
}

// TestShellRun runs commands to their end: their output without the
// typed line's echo, their exit code, a wait longer than the output's
// pauses, a terminal with a size and a real TERM, resized.
func TestShellRun(t *testing.T) {
	c, _ := execRig(t)
	sh, err := c.StartShell(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(context.WithoutCancel(t.Context()))
	long := &machine.RunOptions{Wait: 2 * time.Minute}
	if res := runShell(t, sh, "X=42; echo \"x=$X\"", long); res.Output != "x=42\n" || res.ExitCode == nil || *res.ExitCode != 0 || res.Running {
		t.Fatalf("echo: %+v", res)
	}
	if res := runShell(t, sh, "(exit 7)", long); res.ExitCode == nil || *res.ExitCode != 7 {
		t.Fatalf("exit 7: %+v", res)
	}
	// Silent for a while, then done: the wait is for the end.
	if res := runShell(t, sh, "sleep 2; echo done", long); res.Output != "done\n" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("sleep; echo done: %+v", res)
	}
	if res := runShell(t, sh, `echo "$TERM $(stty size)"; [ -t 0 ] && echo tty`, long); res.Output != "xterm-256color 24 80\ntty\n" {
		t.Fatalf("the terminal: %q", res.Output)
	}
	if err := sh.Resize(t.Context(), 120, 40); err != nil {
		t.Fatal(err)
	}
	if res := runShell(t, sh, "stty size", long); res.Output != "40 120\n" {
		t.Fatalf("resized: %q", res.Output)
	}
	if err := sh.Resize(t.Context(), 1, 40); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a terminal 1 wide: %v", err)
	}
	// A line left open waits for more.
	if res := runShell(t, sh, "for i in 1 2", long); !res.MoreInput || res.ExitCode != nil {
		t.Fatalf("an open loop: %+v", res)
	}
	if res := runShell(t, sh, "do echo $i; done", long); res.Output != "1\n2\n" || res.ExitCode == nil {
		t.Fatalf("the loop's end: %+v", res)
	}
	// The marker's text in a command's output is output.
	if res := runShell(t, sh, `printf '\033]777;x;3\007\n'`, long); res.Output != "\x1b]777;x;3\a\n" || *res.ExitCode != 0 {
		t.Fatalf("a marker of another nonce: %+v", res)
	}
}

// TestShellForeground: a program that runs past the wait is reported
// running, and the next input goes to it; interrupt, EOF and kill end it.
func TestShellForeground(t *testing.T) {
	c, _ := execRig(t)
	sh, err := c.StartShell(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(context.WithoutCancel(t.Context()))
	long := &machine.RunOptions{Wait: 2 * time.Minute}
	short := &machine.RunOptions{Wait: 100 * time.Millisecond}
	if res := runShell(t, sh, "sleep 1000", short); !res.Running || res.ExitCode != nil {
		t.Fatalf("sleep: %+v", res)
	}
	// An interrupt that comes before the shell has handed the terminal to
	// sleep reaches the shell instead: interrupt until sleep ends, as an
	// agent would.
	for {
		if err := sh.Interrupt(t.Context()); err != nil {
			t.Fatal(err)
		}
		res := runShell(t, sh, "", &machine.RunOptions{Wait: 5 * time.Second, Quiet: -1})
		if res.ExitCode != nil {
			if *res.ExitCode != 130 {
				t.Fatalf("after an interrupt: %+v", res)
			}
			break
		}
	}
	// cat reads the next line, and ends at EOF.
	if res := runShell(t, sh, "cat", short); !res.Running {
		t.Fatalf("cat: %+v", res)
	}
	if res := runShell(t, sh, "to cat", &machine.RunOptions{Wait: 2 * time.Minute, Quiet: 50 * time.Millisecond}); res.Output != "to cat\n" || !res.Running {
		t.Fatalf("a line for cat: %+v", res)
	}
	if err := sh.EOF(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := runShell(t, sh, "", long); res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("after EOF: %+v", res)
	}
	// A program that ignores the interrupt is killed.
	if res := runShell(t, sh, "sh -c 'trap \"\" INT; exec sleep 1000'", short); !res.Running {
		t.Fatalf("sleep ignoring SIGINT: %+v", res)
	}
	for {
		if err := sh.Kill(t.Context()); err != nil {
			t.Fatal(err)
		}
		res := runShell(t, sh, "", &machine.RunOptions{Wait: 5 * time.Second, Quiet: -1})
		if res.ExitCode != nil {
			if *res.ExitCode != 137 {
				t.Fatalf("after a kill: %+v", res)
			}
			break
		}
	}
	// The shell itself is never the kill's target.
	if err := sh.Kill(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := runShell(t, sh, "echo alive", long); res.Output != "alive\n" {
		t.Fatalf("after a kill with nothing running: %+v", res)
	}
}

// TestShellBounded: output past MaxOutput is cut, its most recent bytes
// kept and the rest counted; output past MaxBuffer between calls is
// dropped and counted too; concurrent calls are refused as busy.
func TestShellBounded(t *testing.T) {
	c, _ := execRig(t)
	sh, err := c.StartShell(t.Context(), &machine.ShellOptions{MaxBuffer: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(context.WithoutCancel(t.Context()))
	res := runShell(t, sh, "head -c 300000 /dev/zero | tr '\\0' a; echo; echo end", &machine.RunOptions{Wait: 2 * time.Minute, MaxOutput: 1000})
	if len(res.Output) != 1000 || !strings.HasSuffix(res.Output, "a\nend\n") || res.Cut < 299000 || res.ExitCode == nil {
		t.Fatalf("cut output: %d bytes kept, %d cut, %+v", len(res.Output), res.Cut, res.ExitCode)
	}
	if _, err := sh.Run(t.Context(), "true", &machine.RunOptions{MaxOutput: machine.MaxShellOutput + 1}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a MaxOutput over the bound: %v", err)
	}
	// A call while another waits is refused, never mixed: the first
	// holds the shell until its command ends (read waits for a line, and
	// an interrupt, which takes no turn, ends it).
	flag := filepath.Join(t.TempDir(), "reading")
	first := make(chan *machine.ShellResult, 1)
	go func() {
		res, err := sh.Run(context.WithoutCancel(t.Context()), "touch "+flag+"; read x", &machine.RunOptions{Wait: 2 * time.Minute, Quiet: -1})
		if err != nil {
			t.Error(err)
		}
		first <- res
	}()
	for {
		if _, err := os.Stat(flag); err == nil {
			break
		}
		select {
		case res := <-first:
			t.Fatalf("the first call ended early: %+v", res)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := sh.Run(t.Context(), "echo other", nil); !errors.Is(err, machine.ErrShellBusy) {
		t.Fatalf("a call while another runs: %v", err)
	}
	if err := sh.Interrupt(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := <-first; res == nil || res.ExitCode == nil || *res.ExitCode == 0 {
		t.Fatalf("the interrupted first call: %+v", res)
	}
}

// shellRig is execRig with the runtime's exec MaxTimeout set.
func shellRig(t *testing.T, maxTimeout time.Duration) *agent {
	t.Helper()
	return tools(schematest.Serve(t, headless.New(nil), &shinken.RuntimeOptions{Executor: osexec.New(nil), Exec: shinken.ExecOptions{MaxTimeout: maxTimeout}}))
}

// TestShellOutlivesMaxTimeout: the shell holds its variables past the
// runtime's exec MaxTimeout, which bounds every other exec.
func TestShellOutlivesMaxTimeout(t *testing.T) {
	c := shellRig(t, time.Second)
	sh, err := c.StartShell(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(context.WithoutCancel(t.Context()))
	long := &machine.RunOptions{Wait: 2 * time.Minute}
	runShell(t, sh, "X=kept", long)
	// The shell's own sleep is the time passing, past the MaxTimeout.
	if res := runShell(t, sh, "sleep 3; echo $X", long); res.Output != "kept\n" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("after the MaxTimeout: %+v", res)
	}
	res, err := c.Exec(t.Context(), &aci.ExecRequest{Argv: []string{"sleep", "3"}})
	if err != nil || !res.TimedOut {
		t.Fatalf("a plain exec past the MaxTimeout: %+v, %v", res, err)
	}
}

// TestShellSessionEnd: when the ACI session that started the shell ends,
// every process the shell started ends, the ones that left its process
// group and session included.
func TestShellSessionEnd(t *testing.T) {
	c := shellRig(t, 0)
	sh, err := c.StartShell(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each job writes its pid, as the test's /proc names it, to a file:
	// two leave the group and the session, the third is a plain job.
	d := t.TempDir()
	job := `read -r p _ </proc/self/stat; echo $p >"$0.t"; mv "$0.t" "$0"; exec sleep 1000`
	line := fmt.Sprintf(`for j in 1 2; do (setsid sh -c '%[2]s' %[1]s/$j &); done; (sh -c '%[2]s' %[1]s/3 &); until [ -s %[1]s/1 ] && [ -s %[1]s/2 ] && [ -s %[1]s/3 ]; do :; done; cat %[1]s/1 %[1]s/2 %[1]s/3`, d, job)
	res := runShell(t, sh, line, &machine.RunOptions{Wait: 2 * time.Minute, Quiet: -1})
	var pids []int
	for f := range strings.FieldsSeq(res.Output) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("output %q", res.Output)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 3 {
		t.Fatalf("output %q", res.Output)
	}
	proctest.Alive(t, pids...)
	c.Close()
	proctest.Gone(t, pids...)
}

// TestShellIdleBound: the idle bound (injected short here, 30 minutes by
// default) counts from the end of the last call: a shell used for longer
// than the bound, by a call longer than it and calls that only wait,
// holds its variables; left alone past it, the shell ends.
func TestShellIdleBound(t *testing.T) {
	c := shellRig(t, time.Second)
	const idle = 3 * time.Second
	sh, err := c.StartShell(t.Context(), &machine.ShellOptions{IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(context.WithoutCancel(t.Context()))
	long := &machine.RunOptions{Wait: 2 * time.Minute}
	runShell(t, sh, "X=kept", long)
	// The shell's own sleep is the time passing, past the bound, in one
	// call and then in calls that only wait for the command.
	if res := runShell(t, sh, "sleep 4; echo $X", long); res.Output != "kept\n" || res.ExitCode == nil {
		t.Fatalf("after a call longer than the idle bound: %+v", res)
	}
	if _, err := sh.Run(t.Context(), "sleep 4; echo $X", &machine.RunOptions{Wait: time.Second, Quiet: -1}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for {
		res, err := sh.Run(t.Context(), "", &machine.RunOptions{Wait: 2 * time.Second, Quiet: -1})
		if err != nil {
			t.Fatalf("a call that waits: %v (output so far %q)", err, out.String())
		}
		out.WriteString(res.Output)
		if res.ExitCode != nil {
			break
		}
	}
	if out.String() != "kept\n" {
		t.Fatalf("after calls that only waited: %q", out.String())
	}
	select {
	case <-sh.Done():
	case <-time.After(time.Minute):
		t.Fatal("the shell outlived its idle bound")
	}
	if _, err := sh.Run(t.Context(), "echo $X", nil); !errors.Is(err, machine.ErrShellEnded) {
		t.Fatalf("a call after the idle bound: %v", err)
	}
}

// TestShellLines: a shell of lines types one command line at a time, only
// at its prompt; input while a program has the terminal is a
// *NotReadingError naming it, and nothing reaches the program.
func TestShellLines(t *testing.T) {
	c, _ := execRig(t)
	if _, err := c.StartShell(t.Context(), &machine.ShellOptions{Lines: true, Command: "/bin/bash"}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a shell of lines in bash: %v", err)
	}
	sh, err := c.StartShell(t.Context(), &machine.ShellOptions{Lines: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(context.WithoutCancel(t.Context()))
	long := &machine.RunOptions{Wait: 2 * time.Minute}
	if res := runShell(t, sh, "echo $PAGER $GIT_EDITOR", long); res.Output != "cat false\n" {
		t.Fatalf("the environment: %+v", res)
	}
	if _, err := sh.Run(t.Context(), "echo a\necho b", long); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("two lines: %v", err)
	}
	if res := runShell(t, sh, "cat", &machine.RunOptions{Wait: 50 * time.Millisecond}); !res.Running {
		t.Fatalf("cat: %+v", res)
	}
	for {
		// Refused as the shell's until cat has the terminal.
		_, err := sh.Run(t.Context(), "echo to-cat", long)
		var nr *machine.NotReadingError
		if !errors.As(err, &nr) {
			t.Fatalf("input while cat runs: %v", err)
		}
		if nr.Foreground == "cat" {
			break
		}
	}
	if err := sh.EOF(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := runShell(t, sh, "", long); res.ExitCode == nil || *res.ExitCode != 0 || strings.Contains(res.Output, "to-cat") {
		t.Fatalf("cat after EOF: %+v", res)
	}
}

// TestShellLinesFolder: a line is judged in the folder the shell is in, as
// the lines before moved it, and typed only there. An Authorizer that
// allows a line in one folder alone sees it in that folder once the
// shell is there, never in the folder it left; a line judged in the
// folder the shell left, and refused there, is judged again where the
// shell is.
func TestShellLinesFolder(t *testing.T) {
	start, work := t.TempDir(), t.TempDir()
	start, _ = filepath.EvalSymlinks(start)
	work, _ = filepath.EvalSymlinks(work)
	var mu sync.Mutex
	var judged []string // "folder: line" of each typed line judged
	auth := shinken.AuthorizerFunc(func(_ context.Context, req shinken.AuthRequest) error {
		if req.Intent == nil || req.Intent.Tool != "shell" || req.Intent.Line == "" {
			return nil
		}
		mu.Lock()
		judged = append(judged, req.Intent.Dir+": "+strings.TrimSpace(req.Intent.Line))
		mu.Unlock()
		if strings.HasPrefix(req.Intent.Line, "echo made >") && req.Intent.Dir != work {
			return errors.New("writes only in the work folder")
		}
		return nil
	})
	url, _ := schematest.ServeURL(t, headless.New(nil), &shinken.RuntimeOptions{Executor: osexec.New(nil), Authorizer: auth})
	c := tools(schematest.Dial(t, url, nil))
	sh, err := c.StartShell(t.Context(), &machine.ShellOptions{Lines: true, Dir: start})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close(context.WithoutCancel(t.Context()))
	long := &machine.RunOptions{Wait: 2 * time.Minute}
	for _, line := range []string{"pwd", "cd " + work, "echo made > made.txt; pwd", "cd " + start, "pwd"} {
		if res := runShell(t, sh, line, long); res.ExitCode == nil || *res.ExitCode != 0 {
			t.Fatalf("%s: %+v", line, res)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("made.txt: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(start, "made.txt")); err == nil {
		t.Fatal("the line ran in the folder the shell left")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		start + ": pwd",
		start + ": cd " + work,
		start + ": echo made > made.txt; pwd", // judged where the shell was seen last: refused
		work + ": echo made > made.txt; pwd",  // judged again where it is
		work + ": cd " + start,
		work + ": pwd", // typed nothing: the shell left work
		start + ": pwd",
	}
	if !slices.Equal(judged, want) {
		t.Fatalf("judged:\n%s\nwant:\n%s", strings.Join(judged, "\n"), strings.Join(want, "\n"))
	}
}
