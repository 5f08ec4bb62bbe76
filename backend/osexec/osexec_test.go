//go:build linux

package osexec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

func TestMain(m *testing.M) {
	switch os.Getenv(runtimeHelperEnv) {
	case "":
	case escapeHelper:
		runtimeEscapeHelper()
		return
	default:
		runtimeHelper()
		return
	}
	code := m.Run()
	if code == 0 {
		// Every test waits for what it starts, so nothing may be left: no
		// child (a zombie is a child too) and no goroutine.
		if kids := children(); len(kids) > 0 {
			fmt.Fprintf(os.Stderr, "child processes left behind: %+v\n", kids)
			code = 1
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// start starts req and makes sure the process is killed and waited for
// when the test ends, whatever happens to it.
func start(t *testing.T, e *osexec.Executor, req aci.ExecRequest) *osexec.Process {
	t.Helper()
	p, err := e.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("Start(%+v): %v", req, err)
	}
	t.Cleanup(func() {
		p.Kill()
		p.Wait()
	})
	return p.(*osexec.Process)
}

// run starts req and collects its output with a 1 MiB budget.
func run(t *testing.T, e *osexec.Executor, req aci.ExecRequest) shinken.Collected {
	t.Helper()
	out, err := shinken.Collect(start(t, e, req), 1<<20)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	return out
}

func argv(a ...string) aci.ExecRequest { return aci.ExecRequest{Argv: a} }

func ptr[T any](v T) *T { return &v }

func TestArgvIsNotAShell(t *testing.T) {
	e := osexec.New(nil)
	out := run(t, e, argv("echo", "$HOME", "a  b", "`id`;"))
	if got, want := string(out.Stdout), "$HOME a  b `id`;\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if !out.Status.Exited || out.Status.Code != 0 {
		t.Errorf("status %+v, want exit 0", out.Status)
	}
}

func TestShell(t *testing.T) {
	e := osexec.New(nil)
	out := run(t, e, aci.ExecRequest{Shell: "echo $((1+2)); echo oops >&2; exit 3"})
	if string(out.Stdout) != "3\n" || string(out.Stderr) != "oops\n" {
		t.Errorf("stdout %q stderr %q, want \"3\\n\" and \"oops\\n\"", out.Stdout, out.Stderr)
	}
	if !out.Status.Exited || out.Status.Code != 3 || out.Status.Signal != 0 || out.Status.TimedOut {
		t.Errorf("status %+v, want exit 3", out.Status)
	}
	if out.Status.Duration <= 0 {
		t.Errorf("duration %v, want > 0", out.Status.Duration)
	}
}

func TestInvalidRequests(t *testing.T) {
	e := osexec.New(nil)
	for name, req := range map[string]aci.ExecRequest{
		"neither":       {},
		"both":          {Argv: []string{"true"}, Shell: "true"},
		"empty program": {Argv: []string{""}},
		"bad env name":  {Argv: []string{"true"}, Env: map[string]string{"A=B": "c"}},
		// Names a POSIX shell (the command's init) would drop unsaid:
		// refused rather than accepted and not passed on.
		"function name": {Argv: []string{"true"}, Env: map[string]string{"BASH_FUNC_ls%%": "() { :; }"}},
		"dash name":     {Argv: []string{"true"}, Env: map[string]string{"a-b": "c"}},
		"digit first":   {Argv: []string{"true"}, Env: map[string]string{"1A": "c"}},
		"empty name":    {Argv: []string{"true"}, Env: map[string]string{"": "c"}},
	} {
		_, err := e.Start(context.Background(), req)
		if !errors.Is(err, aci.ErrInvalidAction) {
			t.Errorf("%s: err %v, want ErrInvalidAction", name, err)
		}
	}
	if n := osexec.Running(e); n != 0 {
		t.Errorf("Running() = %d after refusals, want 0", n)
	}
}

// writeScript writes an executable shell script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPathLookupUsesMergedEnv(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "shinken-tool", "echo found")
	e := osexec.New(nil)

	out := run(t, e, aci.ExecRequest{
		Argv: []string{"shinken-tool"},
		Env:  map[string]string{"PATH": dir + ":/usr/bin:/bin"},
	})
	if string(out.Stdout) != "found\n" {
		t.Errorf("stdout %q, want found", out.Stdout)
	}

	// Not on the runtime's PATH, and relative PATH entries are not searched
	// even when the program lies in the working directory.
	for _, env := range []map[string]string{nil, {"PATH": ".:/usr/bin"}, {"PATH": ":/usr/bin"}} {
		_, err := e.Start(context.Background(), aci.ExecRequest{Argv: []string{"shinken-tool"}, Dir: dir, Env: env})
		if !errors.Is(err, aci.ErrExecSpawnFailed) || !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("PATH %q: err %v, want exec_spawn_failed wrapping exec.ErrNotFound", env["PATH"], err)
		}
	}

	// A name with a slash is taken relative to the working directory.
	out = run(t, e, aci.ExecRequest{Argv: []string{"./shinken-tool"}, Dir: dir})
	if string(out.Stdout) != "found\n" {
		t.Errorf("./shinken-tool in Dir: stdout %q, want found", out.Stdout)
	}
}

func TestDir(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := osexec.New(nil)
	out := run(t, e, aci.ExecRequest{Argv: []string{"pwd", "-P"}, Dir: dir})
	if got := strings.TrimSpace(string(out.Stdout)); got != dir {
		t.Errorf("pwd %q, want %q", got, dir)
	}
}

func TestEnvMerge(t *testing.T) {
	e := osexec.New(&osexec.Options{Env: []string{"A=1", "B=2", "B=3", "Z=last"}})
	out := run(t, e, aci.ExecRequest{
		Argv: []string{"env"},
		Env:  map[string]string{"D": "", "B": "x", "C": "y=z"},
	})
	// Base order kept, duplicates resolved to the last, overrides in
	// place, new names appended in order; no PATH is added. A command in
	// a pid namespace gets it through its init's shell, which adds PWD and
	// may reorder the variables.
	want := "A=1\nB=x\nZ=last\nC=y=z\nD=\n"
	got := string(out.Stdout)
	if e.Contained() {
		var vars []string
		for _, v := range strings.Split(strings.TrimSpace(got), "\n") {
			if !strings.HasPrefix(v, "PWD=") {
				vars = append(vars, v)
			}
		}
		slices.Sort(vars)
		got, want = strings.Join(vars, "\n")+"\n", "A=1\nB=x\nC=y=z\nD=\nZ=last\n"
	}
	if got != want {
		t.Errorf("env:\n%s\nwant:\n%s", got, want)
	}

	// The default base is the runtime's own environment.
	t.Setenv("SHINKEN_OSEXEC_TEST", "from the runtime")
	out = run(t, osexec.New(nil), argv("sh", "-c", `printf %s "$SHINKEN_OSEXEC_TEST"`))
	if string(out.Stdout) != "from the runtime" {
		t.Errorf("inherited variable %q, want %q", out.Stdout, "from the runtime")
	}
}

func TestStdin(t *testing.T) {
	e := osexec.New(nil)
	out := run(t, e, aci.ExecRequest{Argv: []string{"cat"}, Stdin: ptr("hello\nwörld")})
	if string(out.Stdout) != "hello\nwörld" {
		t.Errorf("cat echoed %q", out.Stdout)
	}

	// No stdin reads as /dev/null: end of file at once.
	out = run(t, e, argv("cat"))
	if len(out.Stdout) != 0 || out.Status.Code != 0 {
		t.Errorf("cat with no stdin: %q, %+v", out.Stdout, out.Status)
	}
	out = run(t, e, aci.ExecRequest{Argv: []string{"cat"}, Stdin: ptr("")})
	if len(out.Stdout) != 0 || out.Status.Code != 0 {
		t.Errorf("cat with empty stdin: %q, %+v", out.Stdout, out.Status)
	}

	// Far more than a pipe holds.
	big := strings.Repeat("0123456789abcdef", 1<<16)
	out = run(t, e, aci.ExecRequest{Argv: []string{"wc", "-c"}, Stdin: &big})
	if got := strings.TrimSpace(string(out.Stdout)); got != strconv.Itoa(len(big)) {
		t.Errorf("wc -c counted %s, want %d", got, len(big))
	}

	// A child that never reads its input blocks neither Start nor Wait.
	p := start(t, e, aci.ExecRequest{Argv: []string{"sleep", "100"}, Stdin: &big})
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(); err != nil || st.Signal != 9 {
		t.Errorf("Wait after Kill: %+v, %v", st, err)
	}
	out = run(t, e, aci.ExecRequest{Argv: []string{"true"}, Stdin: &big})
	if out.Status.Code != 0 {
		t.Errorf("true with unread stdin: %+v", out.Status)
	}
}

func TestSpawnFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExec, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := osexec.New(nil)
	for _, tc := range []struct {
		name string
		req  aci.ExecRequest
		want string
	}{
		{"missing program", argv("/nonexistent/prog"), "exec_spawn_failed: /nonexistent/prog: no such file or directory"},
		{"not on PATH", argv("no-such-program-here"), "exec_spawn_failed: no-such-program-here: executable file not found in PATH"},
		{"missing dir", aci.ExecRequest{Argv: []string{"true"}, Dir: "/nonexistent"}, "exec_spawn_failed: chdir /nonexistent: no such file or directory"},
		{"dir is a file", aci.ExecRequest{Argv: []string{"true"}, Dir: notExec}, "exec_spawn_failed: chdir " + notExec + ": not a directory"},
		{"not executable", argv(notExec), "exec_spawn_failed: " + notExec + ": permission denied"},
		{"shell in missing dir", aci.ExecRequest{Shell: "true", Dir: "/nonexistent"}, "exec_spawn_failed: chdir /nonexistent: no such file or directory"},
	} {
		p, err := e.Start(context.Background(), tc.req)
		if err == nil {
			p.Wait()
			t.Errorf("%s: started", tc.name)
			continue
		}
		if !errors.Is(err, aci.ErrExecSpawnFailed) {
			t.Errorf("%s: %v does not wrap ErrExecSpawnFailed", tc.name, err)
		}
		if got := aci.WireError(err); got != tc.want {
			t.Errorf("%s: wire error %q, want %q", tc.name, got, tc.want)
		}
	}
	if n := osexec.Running(e); n != 0 {
		t.Errorf("Running() = %d after failed spawns, want 0", n)
	}
}

// TestTimeoutKillsGroup is the case that leaves orphans elsewhere: the
// leader and a background grandchild both hold the output pipes.
func TestTimeoutKillsGroup(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const waitDelay = 500 * time.Millisecond
	e := osexec.New(&osexec.Options{WaitDelay: waitDelay})
	for _, consume := range []bool{true, false} {
		t.Run(fmt.Sprintf("read output %v", consume), func(t *testing.T) {
			t0 := time.Now()
			p := start(t, e, aci.ExecRequest{Shell: "echo started; sleep 100 & sleep 100", Timeout: timeout})
			if consume {
				c, err := p.Next()
				if err != nil || string(c.Data) != "started\n" {
					t.Fatalf("Next: %q, %v", c.Data, err)
				}
				if _, err := p.Next(); err != io.EOF {
					t.Fatalf("Next after the kill: %v, want io.EOF", err)
				}
			}
			st, err := p.Wait()
			elapsed := time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
			if !st.TimedOut || st.Exited || st.Signal != 9 {
				t.Errorf("status %+v, want timed out by signal 9", st)
			}
			if elapsed < timeout || elapsed > timeout+waitDelay+2*time.Second {
				t.Errorf("Wait returned after %v, want within %v of the %v deadline", elapsed, waitDelay, timeout)
			}
			if st.Duration < timeout {
				t.Errorf("duration %v, before the deadline", st.Duration)
			}
			groupDies(t, p.Pid())
		})
	}
}

// backgroundJob runs a shell line that starts job in the background and
// echoes its pid, collects the output, and returns the job's pid and how
// long it all took. The pid is read from /proc/self (the runtime's /proc),
// not $!, which names it in the command's own pid namespace; the line
// waits until the job has written it. It kills the job by its pid when
// the test ends.
func backgroundJob(t *testing.T, e *osexec.Executor, job string) (p *osexec.Process, pid int, took time.Duration) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "pid")
	shell := fmt.Sprintf(`(read -r p _ </proc/self/stat; echo $p >%[1]s.new; mv %[1]s.new %[1]s; exec %[2]s) & until [ -s %[1]s ]; do :; done; cat %[1]s`, f, job)
	t0 := time.Now()
	p = start(t, e, aci.ExecRequest{Shell: shell})
	out, err := shinken.Collect(p, 1024)
	took = time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(out.Stdout)))
	if err != nil {
		t.Fatalf("stdout %q: %v", out.Stdout, err)
	}
	t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL) })
	if !out.Status.Exited || out.Status.Code != 0 || out.Status.TimedOut {
		t.Errorf("status %+v, want exit 0", out.Status)
	}
	return p, pid, took
}

// TestBackgroundJobs: the command is done but a background job remains.
// With KeepBackground it keeps running, as a shell would leave it, and if
// it holds the output pipes, the wait for it is bounded by WaitDelay.
// Without, it dies with the command: at once where the command runs in a
// pid namespace of its own (whatever the job did to leave the group), or
// with the group after up to WaitDelay where it does not.
func TestBackgroundJobs(t *testing.T) {
	const waitDelay = 300 * time.Millisecond
	const slack = 2 * time.Second
	for _, kill := range []bool{false, true} {
		e := osexec.New(&osexec.Options{WaitDelay: waitDelay, KeepBackground: !kill})
		contained := e.Contained()
		gone := func(t *testing.T, p *osexec.Process, job int) {
			t.Helper()
			if contained {
				waitFor(t, 5*time.Second, "the job to die", func() bool { return !procfs.Alive(job) })
			}
			groupDies(t, p.Pid())
		}
		t.Run(fmt.Sprintf("kill background %v/holding stdout", kill), func(t *testing.T) {
			p, job, took := backgroundJob(t, e, "sleep 100")
			if !contained && (took < waitDelay || took > waitDelay+slack) {
				t.Errorf("took %v, want about WaitDelay (%v)", took, waitDelay)
			}
			if kill {
				gone(t, p, job)
			} else if !procfs.Alive(job) {
				t.Errorf("the background job %d was killed", job)
			}
		})
		t.Run(fmt.Sprintf("kill background %v/detached", kill), func(t *testing.T) {
			p, job, took := backgroundJob(t, e, "sleep 100 >/dev/null 2>&1")
			if took > slack {
				t.Errorf("took %v, want no wait", took)
			}
			if kill {
				gone(t, p, job)
			} else if !procfs.Alive(job) {
				t.Errorf("the background job %d was killed", job)
			}
		})
		t.Run(fmt.Sprintf("kill background %v/left the group", kill), func(t *testing.T) {
			// Without job control the background job is no group leader, so
			// setsid execs sleep in place and keeps the job's pid.
			p, job, took := backgroundJob(t, e, "setsid sleep 100")
			if took > 2*waitDelay+slack {
				t.Errorf("took %v, want at most twice WaitDelay (%v)", took, waitDelay)
			}
			if contained {
				waitFor(t, 5*time.Second, "the job that left the group to die", func() bool { return !procfs.Alive(job) })
				return
			}
			if st, ok := readStat(job); !ok || st.PGID == p.Pid() || !procfs.Alive(job) {
				t.Errorf("the job that left: %+v, %v; want it alive in a group of its own", st, ok)
			}
			if kill {
				groupDies(t, p.Pid())
			}
		})
	}
}

// TestBackpressure: a caller that stops calling Next stops the child.
func TestBackpressure(t *testing.T) {
	const chunk = 32 << 10
	const total = 100 << 20
	e := osexec.New(&osexec.Options{ChunkSize: chunk})
	p := start(t, e, argv("head", "-c", strconv.Itoa(total), "/dev/zero"))
	c, err := p.Next()
	if err != nil {
		t.Fatal(err)
	}
	read := int64(len(c.Data))
	pid := command(t, e, p)

	// The child ends up asleep in write(2) on a full pipe...
	waitFor(t, 10*time.Second, "the child to block in write", func() bool {
		return blockedInSyscall(pid, unix.SYS_WRITE)
	})
	// ...having written no more than what was read, what the pipe holds
	// and the chunks read ahead.
	const pipeMax = 1 << 20 // what an unprivileged process may grow a pipe to
	bound := read + pipeMax + osexec.ReadAhead*chunk
	if w := bytesWritten(t, pid); w > bound {
		t.Errorf("the child wrote %d bytes while %d were read; want at most %d", w, read, bound)
	}
	if n := osexec.BuffersTaken(p); n > osexec.ReadAhead {
		t.Errorf("%d buffers taken, want at most %d", n, osexec.ReadAhead)
	}

	// Resuming delivers everything, in chunks no larger than asked.
	for {
		c, err := p.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Data) > chunk {
			t.Fatalf("chunk of %d bytes, want at most %d", len(c.Data), chunk)
		}
		read += int64(len(c.Data))
	}
	if read != total {
		t.Errorf("read %d bytes, want %d", read, total)
	}
	if n := osexec.BuffersTaken(p); n > osexec.ReadAhead {
		t.Errorf("%d buffers taken, want at most %d", n, osexec.ReadAhead)
	}
	if st, err := p.Wait(); err != nil || st.Code != 0 {
		t.Errorf("Wait: %+v, %v", st, err)
	}
}

// TestWaitDiscards: Wait without reading lets the child finish.
func TestWaitDiscards(t *testing.T) {
	e := osexec.New(nil)
	p := start(t, e, aci.ExecRequest{Shell: "head -c 20000000 /dev/zero; head -c 20000000 /dev/zero >&2; exit 7"})
	st, err := p.Wait()
	if err != nil || !st.Exited || st.Code != 7 {
		t.Errorf("Wait: %+v, %v; want exit 7", st, err)
	}
	if _, err := p.Next(); err != io.EOF {
		t.Errorf("Next after Wait: %v, want io.EOF", err)
	}
}

func TestConcurrentProcesses(t *testing.T) {
	e := osexec.New(nil)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			id := strconv.Itoa(i)
			p, err := e.Start(context.Background(), aci.ExecRequest{
				Shell: `cat; echo "err $ID" >&2; head -c 200000 /dev/zero`,
				Env:   map[string]string{"ID": id},
				Stdin: ptr("out " + id + "\n"),
			})
			if err != nil {
				errs <- err
				return
			}
			out, err := shinken.Collect(p, 1<<20)
			switch {
			case err != nil:
				errs <- err
			case !bytes.HasPrefix(out.Stdout, []byte("out "+id+"\n")) || len(out.Stdout) != len("out "+id+"\n")+200000:
				errs <- fmt.Errorf("%s: stdout %q... (%d bytes)", id, out.Stdout[:min(len(out.Stdout), 10)], len(out.Stdout))
			case string(out.Stderr) != "err "+id+"\n":
				errs <- fmt.Errorf("%s: stderr %q", id, out.Stderr)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if r := osexec.Running(e); r != 0 {
		t.Errorf("Running() = %d after all were waited for", r)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	e := osexec.New(&osexec.Options{MaxProcesses: 2})
	a := start(t, e, argv("sleep", "100"))
	start(t, e, argv("sleep", "100"))
	_, err := e.Start(context.Background(), argv("true"))
	if !errors.Is(err, aci.ErrTooManyExecs) {
		t.Fatalf("third Start: %v, want ErrTooManyExecs", err)
	}
	if !strings.HasPrefix(aci.WireError(err), "too_many_execs: ") {
		t.Errorf("wire error %q", aci.WireError(err))
	}
	if n := osexec.Running(e); n != 2 {
		t.Errorf("Running() = %d, want 2", n)
	}
	// A slot is free again once its process has been waited for.
	a.Kill()
	a.Wait()
	if out := run(t, e, argv("true")); out.Status.Code != 0 {
		t.Errorf("Start after a slot freed: %+v", out.Status)
	}
}

func TestContextCancelKillsGroup(t *testing.T) {
	e := osexec.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := e.Start(ctx, aci.ExecRequest{Shell: "sleep 100 & echo up; sleep 100"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := p.Next(); err != nil || string(c.Data) != "up\n" {
		t.Fatalf("Next: %q, %v", c.Data, err)
	}
	cancel()
	st, err := p.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Wait error %v, want context.Canceled", err)
	}
	if st.Exited || st.Signal != 9 || st.TimedOut {
		t.Errorf("status %+v, want killed by 9, not timed out", st)
	}
	groupDies(t, p.(*osexec.Process).Pid())

	// A context already done starts nothing.
	if _, err := e.Start(ctx, argv("true")); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done context: %v", err)
	}
}

func TestKillAndWaitInAnyOrder(t *testing.T) {
	e := osexec.New(nil)

	// Wait blocks in one goroutine, Kill comes from another.
	p := start(t, e, aci.ExecRequest{Shell: "sleep 100 & sleep 100"})
	waited := make(chan shinken.ExitStatus)
	go func() {
		st, _ := p.Wait()
		waited <- st
	}()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := p.Kill(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if st := <-waited; st.Signal != 9 || st.TimedOut {
		t.Errorf("status %+v, want killed by 9", st)
	}
	groupDies(t, p.Pid())
	// After the reap, Kill does nothing and Wait answers the same.
	if err := p.Kill(); err != nil {
		t.Errorf("Kill after Wait: %v", err)
	}
	if st, err := p.Wait(); err != nil || st.Signal != 9 {
		t.Errorf("second Wait: %+v, %v", st, err)
	}

	// Kill of a process that already exited is harmless.
	p = start(t, e, argv("true"))
	if _, err := p.Next(); err != io.EOF {
		t.Fatalf("Next: %v", err)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill after exit: %v", err)
	}
	if st, err := p.Wait(); err != nil || !st.Exited {
		t.Errorf("Wait: %+v, %v", st, err)
	}
}

func TestTimeoutDefaultsAndClamp(t *testing.T) {
	for name, tc := range map[string]struct {
		opts    osexec.Options
		timeout time.Duration
	}{
		"default applies to 0":    {osexec.Options{DefaultTimeout: 200 * time.Millisecond}, 0},
		"maximum clamps":          {osexec.Options{MaxTimeout: 200 * time.Millisecond}, time.Hour},
		"maximum clamps no limit": {osexec.Options{DefaultTimeout: -1, MaxTimeout: 200 * time.Millisecond}, 0},
	} {
		t.Run(name, func(t *testing.T) {
			e := osexec.New(&tc.opts)
			out := run(t, e, aci.ExecRequest{Argv: []string{"sleep", "100"}, Timeout: tc.timeout})
			if !out.Status.TimedOut || out.Status.Signal != 9 {
				t.Errorf("status %+v, want timed out", out.Status)
			}
			if d := out.Status.Duration; d < 200*time.Millisecond || d > 10*time.Second {
				t.Errorf("duration %v, want about 200ms", d)
			}
		})
	}

	// Exiting before the deadline is not a timeout.
	out := run(t, osexec.New(nil), aci.ExecRequest{Argv: []string{"true"}, Timeout: time.Hour})
	if out.Status.TimedOut || !out.Status.Exited {
		t.Errorf("status %+v", out.Status)
	}
}

// TestNoZombies: processes are reaped as they end, even those that were
// never read from.
func TestNoZombies(t *testing.T) {
	e := osexec.New(nil)
	var ps []*osexec.Process
	for range 8 {
		ps = append(ps, start(t, e, aci.ExecRequest{Shell: "exit 1"}))
	}
	for _, p := range ps {
		waitFor(t, 10*time.Second, "the exited child to be reaped", func() bool {
			st, ok := readStat(p.Pid())
			return !ok || st.PPID != os.Getpid()
		})
		if st, err := p.Wait(); err != nil || st.Code != 1 {
			t.Errorf("Wait: %+v, %v", st, err)
		}
	}
	if kids := children(); len(kids) != 0 {
		t.Errorf("children left: %+v", kids)
	}
}

// runtimeHelperEnv makes the test binary play a runtime for
// TestChildDiesWithRuntime.
const runtimeHelperEnv = "SHINKEN_OSEXEC_RUNTIME_HELPER"

// runtimeHelper starts a long command from a goroutine, as a runtime
// would, prints its pid, then waits to be killed.
func runtimeHelper() {
	started := make(chan int)
	go func() {
		p, err := osexec.New(nil).Start(context.Background(), argv("sleep", "100"))
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		started <- p.(*osexec.Process).Pid()
		p.Wait()
	}()
	fmt.Println(<-started)
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// TestChildDiesWithRuntime: a runtime killed outright takes its commands
// with it, by the parent-death signal.
func TestChildDiesWithRuntime(t *testing.T) {
	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), runtimeHelperEnv+"=1")
	stdin, err := helper.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	if _, err := fmt.Fscan(stdout, &child); err != nil {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("reading the command's pid: %v", err)
	}
	if st, ok := readStat(child); !ok || st.PPID != helper.Process.Pid || st.State == 'Z' {
		t.Fatalf("the command %d: %+v, %v; want it running under the helper", child, st, ok)
	}
	helper.Process.Kill()
	helper.Wait()
	waitFor(t, 5*time.Second, "the orphaned command to die", func() bool {
		st, ok := readStat(child)
		return !ok || st.State == 'Z' || st.State == 'X'
	})
}

// TestOwnSession: a command runs in a session of its own, led by it or
// by its init, so it holds no controlling terminal of the daemon's to
// type into (TIOCSTI), and its process group is that session's.
func TestOwnSession(t *testing.T) {
	e := osexec.New(nil)
	p := start(t, e, argv("cat", "/proc/self/stat"))
	out, err := shinken.Collect(p, 4096)
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid pgrp session tty_nr ...: comm is "cat".
	_, rest, ok := strings.Cut(string(out.Stdout), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 5 {
		t.Fatalf("/proc/self/stat: %q", out.Stdout)
	}
	pid := strconv.Itoa(p.Pid())
	if pgrp, sid, tty := f[2], f[3], f[4]; sid != pid || pgrp != pid || tty != "0" {
		t.Errorf("pid %s: group %s, session %s, tty %s; want its own group and session, and no terminal", pid, pgrp, sid, tty)
	}
}
