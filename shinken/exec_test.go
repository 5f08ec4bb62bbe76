package shinken_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

func argv(a ...string) *aci.ExecRequest { return &aci.ExecRequest{Argv: a} }

func shell(s string) *aci.ExecRequest { return &aci.ExecRequest{Shell: s} }

func TestExecBuffered(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)

	res, err := c.Exec(ctx, argv("sh", "-c", "echo out; echo err >&2; exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode == nil || *res.ExitCode != 3 || res.TimedOut || res.Signal != nil {
		t.Fatalf("result %+v", res)
	}

	// Shell form, cwd, env merged over the runtime's, stdin.
	dir := t.TempDir()
	a := shell(`pwd; echo "$GREETING $HOME"; cat`)
	a.Dir = dir
	a.Env = map[string]string{"GREETING": "bonjour"}
	in := "from stdin"
	a.Stdin = &in
	res, err = c.Exec(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	want := dir + "\nbonjour " + os.Getenv("HOME") + "\nfrom stdin"
	if res.Stdout != want {
		t.Fatalf("stdout %q, want %q", res.Stdout, want)
	}

	// argv is never given to a shell.
	res, err = c.Exec(ctx, argv("echo", "$HOME;", "`id`"))
	if err != nil || res.Stdout != "$HOME; `id`\n" {
		t.Fatalf("argv echo: %q %v", res.Stdout, err)
	}

	// Spawn failures are typed.
	if _, err := c.Exec(ctx, argv("no-such-program-xyz")); !errors.Is(err, aci.ErrExecSpawnFailed) {
		t.Fatalf("missing program: %v", err)
	}
	bad := "/no/such/dir"
	a = argv("true")
	a.Dir = bad
	if _, err := c.Exec(ctx, a); !errors.Is(err, aci.ErrExecSpawnFailed) {
		t.Fatalf("missing cwd: %v", err)
	}

	// Lossy UTF-8.
	res, err = c.Exec(ctx, shell(`printf 'a\377b'`))
	if err != nil || res.Stdout != "a\uFFFDb" {
		t.Fatalf("non-UTF-8: %q %v", res.Stdout, err)
	}
}

// TestExecTimeoutKillsTheGroup runs a command whose grandchildren hold the
// pipes, and checks that the deadline kills the whole group, honestly.
func TestExecTimeoutKillsTheGroup(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	marker := "shinken-timeout-" + strconv.Itoa(os.Getpid())
	// A duration no other test on the machine sleeps, so that only this
	// test's sleeps are counted.
	long := "100." + strconv.Itoa(os.Getpid())
	a := shell(`sleep ` + long + ` & sleep ` + long + `; echo ` + marker)
	a.Timeout = 300 * time.Millisecond
	start := time.Now()
	res, err := c.Exec(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != nil || res.Signal == nil || *res.Signal != 9 {
		t.Fatalf("timeout result %+v", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a 300 ms timeout took %v", d)
	}
	if n := sleepers(long); n != 0 {
		t.Fatalf("%d sleep processes of ours survived the group kill", n)
	}
}

// sleepers counts the live "sleep d" processes.
func sleepers(d string) int {
	n := 0
	pids, _ := procfs.PIDs()
	for _, pid := range pids {
		// A zombie is no survivor.
		if args, _ := procfs.Cmdline(pid); slices.Equal(args, []string{"sleep", d}) && procfs.Alive(pid) {
			n++
		}
	}
	return n
}

func TestExecStreamBinaryExact(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	for _, text := range []bool{false, true} {
		c := e.dial(t, &client.DialOptions{TextFrames: text})
		st, err := c.ExecStream(ctx, shell(`printf '\377\000\001'; printf 'err' >&2; printf '\376'`))
		if err != nil {
			t.Fatal(err)
		}
		var out, errb []byte
		last := int64(-1)
		for {
			ch, err := st.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if int64(ch.Seq) <= last {
				t.Fatalf("seq %d after %d", ch.Seq, last)
			}
			last = int64(ch.Seq)
			if ch.Channel == "stdout" {
				out = append(out, ch.Data...)
			} else {
				errb = append(errb, ch.Data...)
			}
		}
		x := st.Exit()
		if !bytes.Equal(out, []byte{0xff, 0, 1, 0xfe}) || string(errb) != "err" || x == nil || x.ExitCode == nil || *x.ExitCode != 0 || x.Truncated {
			t.Fatalf("text=%v: out %x err %q exit %+v", text, out, errb, x)
		}
	}

	// A spawn failure in the streamed form is an ack, then an exec_exit
	// with error and a null exit code: Next reports it as the same typed
	// error the buffered form returns.
	c := e.dial(t, nil)
	st, err := c.ExecStream(ctx, argv("no-such-program-xyz"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(ctx); !errors.Is(err, aci.ErrExecSpawnFailed) {
		t.Fatalf("Next: %v", err)
	}
	if x := st.Exit(); x.ExitCode != nil || !strings.HasPrefix(x.Error, "exec_spawn_failed: ") {
		t.Fatalf("exit %+v", x)
	}
}

// TestExecTruncation writes 50 MB and checks the budgets are honest and the
// runtime stays responsive meanwhile.
func TestExecTruncation(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{Exec: shinken.ExecOptions{OutputBudget: 1 << 20, StreamBudget: 2 << 20}})
	c := e.dial(t, nil)
	ctx := testCtx(t)
	done := make(chan error, 1)
	go func() {
		res, err := c.Exec(ctx, shell(`head -c 50000000 /dev/zero | tr '\0' a; echo tail >&2`))
		if err == nil && (len(res.Stdout) != 1<<20 || !res.StdoutTruncated || res.StderrTruncated || res.Stderr != "tail\n" || *res.ExitCode != 0) {
			err = fmt.Errorf("result: %d bytes, truncated %v/%v, stderr %q", len(res.Stdout), res.StdoutTruncated, res.StderrTruncated, res.Stderr)
		}
		done <- err
	}()
	other := e.dial(t, nil)
	if err := other.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Screenshot(ctx, &client.ScreenshotRequest{MaxLongEdge: 100}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	st, err := c.ExecStream(ctx, shell(`head -c 10000000 /dev/zero`))
	if err != nil {
		t.Fatal(err)
	}
	total, err := streamedBytes(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if x := st.Exit(); total != 2<<20 || !x.Truncated || *x.ExitCode != 0 {
		t.Fatalf("streamed %d bytes, exit %+v", total, x)
	}
}

func TestExecDroppedConnectionKillsGroup(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.dial(t, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The pid as the test's /proc names it: $$ would name it in the
	// command's own pid namespace.
	st, err := c.ExecStream(ctx, shell(`read -r p _ </proc/self/stat; echo $p > `+pidFile+`; echo started; sleep 100 & sleep 100`))
	if err != nil {
		t.Fatal(err)
	}
	if ch, err := st.Next(ctx); err != nil || string(ch.Data) != "started\n" {
		t.Fatalf("first chunk %q %v", ch.Data, err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	c.Close()
	// The command must go; poll with a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for pid <= 0 || procfs.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the command %d still alive after the client left", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExecAuthorizerAndLimits(t *testing.T) {
	deny := shinken.AuthorizerFunc(func(ctx context.Context, req shinken.AuthRequest) error {
		if req.Verb == aci.VerbExec && req.Action.Argv != nil && req.Action.Argv[0] == "rm" {
			return errors.New("rm is not allowed here")
		}
		if req.Verb == aci.VerbLaunchApp {
			return errors.New("no apps")
		}
		return nil
	})
	e := newEnv(t, &shinken.RuntimeOptions{Authorizer: deny, Exec: shinken.ExecOptions{MaxPerConn: 1}})
	c := e.dial(t, nil)
	ctx := testCtx(t)
	_, err := c.Exec(ctx, argv("rm", "-rf", "/nothing"))
	var se *aci.Error
	if !errors.As(err, &se) || se.Code != aci.CodePermissionDenied || se.Detail != "rm is not allowed here" {
		t.Fatalf("denied exec: %#v", err)
	}
	// The streamed form refuses the same way, before anything runs.
	if _, err := c.ExecStream(ctx, argv("rm", "-rf", "/nothing")); !errors.As(err, &se) || se.Code != aci.CodePermissionDenied || se.Detail != "rm is not allowed here" {
		t.Fatalf("denied streamed exec: %#v", err)
	}
	if err := c.LaunchApp(ctx, "notes"); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("denied launch: %v", err)
	}
	if res, err := c.Exec(ctx, argv("true")); err != nil || *res.ExitCode != 0 {
		t.Fatalf("allowed exec: %v", err)
	}

	// One exec per connection: a second concurrent one is refused.
	st, err := c.ExecStream(ctx, shell(`echo go; sleep 100`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, argv("true")); !errors.Is(err, aci.ErrTooManyExecs) {
		t.Fatalf("second exec: %v", err)
	}
	// Another connection has its own allowance.
	if _, err := e.dial(t, nil).Exec(ctx, argv("true")); err != nil {
		t.Fatalf("other connection: %v", err)
	}
}

func TestExecConcurrent(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	errs := make(chan error, 6)
	for i := range 6 {
		go func() {
			res, err := c.Exec(ctx, shell(fmt.Sprintf("sleep 0.1; echo %d", i)))
			if err == nil && res.Stdout != fmt.Sprintf("%d\n", i) {
				err = fmt.Errorf("exec %d printed %q", i, res.Stdout)
			}
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestExecBackpressure streams an endless command to a client that never
// reads: the runtime's queue fills to its bound, then the runtime stops
// reading the pipe, and the child stalls instead of filling memory.
func TestExecBackpressure(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{WriteQueue: 8, WriteTimeout: time.Minute})
	r := e.raw(t, true)
	pidFile := filepath.Join(t.TempDir(), "pid")
	r.send(`{"type":"action","call_id":"x","action":{"verb":"exec","shell":"read -r p _ </proc/self/stat; echo $p > ` + pidFile + `; exec yes","stream":true}}`)
	var pid int
	waitFor(t, "the child's pid", 10*time.Second, func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	waitFor(t, "the write queue to fill", 20*time.Second, func() bool { return shinken.MaxQueue(e.rt) >= 8 })
	written := func() int64 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "wchar: "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		return -1
	}
	// Nothing can prove a stall but time passing: the child would write
	// gigabytes in this second if nothing held it back.
	before := written()
	time.Sleep(time.Second)
	after := written()
	if after-before > 8<<20 || after > 256<<20 {
		t.Fatalf("the child kept writing (%d bytes, then %d) while the client read nothing", before, after)
	}
	if q := shinken.MaxQueue(e.rt); q > 8 {
		t.Fatalf("queue length %d over its bound", q)
	}
}

// streamedBytes reads a streamed exec to its end and counts its bytes.
func streamedBytes(ctx context.Context, st *client.ExecStream) (int, error) {
	total := 0
	for {
		ch, err := st.Next(ctx)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		total += len(ch.Data)
	}
}
