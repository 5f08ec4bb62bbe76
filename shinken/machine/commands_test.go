package machine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/proctest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/machine"
)

// intents records what the runtime's Authorizer was asked to judge.
type intents struct {
	mu  sync.Mutex
	got []shinken.Intent
}

func (r *intents) Authorize(_ context.Context, req shinken.AuthRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Intent != nil {
		r.got = append(r.got, *req.Intent)
	}
	return nil
}

func (r *intents) take() []shinken.Intent {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// commandRig is a headless runtime that runs exec on this machine with
// an Authorizer that records intents, and a dialler of sessions to it.
func commandRig(t *testing.T, maxTimeout time.Duration) (dial func() *agent, rec *intents) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir()) // the runtime's commands make their folders there
	rec = &intents{}
	url, _ := schematest.ServeURL(t, headless.New(nil), &shinken.RuntimeOptions{Executor: osexec.New(nil), Authorizer: rec, Exec: shinken.ExecOptions{MaxTimeout: maxTimeout}})
	return func() *agent { return tools(schematest.Dial(t, url, nil)) }, rec
}

// outputUntil reads the command's whole kept output until it contains
// want or the command has ended.
func outputUntil(t *testing.T, c *agent, id, want string) *machine.CommandOutput {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := c.CommandOutput(t.Context(), id, 0, machine.MaxCommandRead)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.Output, want) || !out.Running {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q: %+v", want, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func listed(t *testing.T, c *agent, id string) *machine.CommandInfo {
	t.Helper()
	cs, err := c.Commands(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, ci := range cs {
		if ci.ID == id {
			return &ci
		}
	}
	return nil
}

// TestCommands starts commands in the background, lists them, sends one
// input and ends its input, reattaches to its output from another
// session, kills the other by pid, and refuses unknown handles; starting
// one and sending input are judged as what they run, the rest is not.
func TestCommands(t *testing.T) {
	dial, rec := commandRig(t, 0)
	c, other := dial(), dial()
	ctx := t.Context()
	line := `echo started; while read -r l; do echo "got $l"; done; echo bye; exit 7`
	cmd, err := c.StartCommand(ctx, line, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0].Tool != "commands" || got[0].Kind != "command" || got[0].Line != line {
		t.Fatalf("the start was judged as %+v", got)
	}
	outputUntil(t, other, cmd.ID(), "started")
	ci := listed(t, other, cmd.ID())
	if ci == nil || !ci.Running || ci.Line != line || ci.PID <= 0 || !procfs.Alive(ci.PID) {
		t.Fatalf("listed as %+v", ci)
	}
	if err := other.CommandInput(ctx, cmd.ID(), "hello\n"); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0].Line != "hello\n" {
		t.Fatalf("the input was judged as %+v", got)
	}
	if out := outputUntil(t, other, cmd.ID(), "got hello"); !strings.Contains(out.Output, "got hello") {
		t.Fatalf("the input did not reach it: %+v", out)
	}

	sleeper, err := c.StartCommand(ctx, "", &machine.CommandOptions{Argv: []string{"sleep", "1234.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || !slices.Equal(got[0].Argv, []string{"sleep", "1234.5"}) {
		t.Fatalf("the argv start was judged as %+v", got)
	}
	var pid int
	for pid == 0 {
		if ci := listed(t, c, sleeper.ID()); ci != nil && ci.PID > 0 {
			pid = ci.PID
			if !slices.Equal(ci.Argv, []string{"sleep", "1234.5"}) {
				t.Fatalf("listed as %+v", ci)
			}
		}
	}
	if err := other.KillCommandPID(ctx, pid); err != nil {
		t.Fatal(err)
	}
	if st, err := sleeper.Wait(ctx); err != nil || !st.Killed {
		t.Fatalf("after the kill: %+v, %v", st, err)
	}
	if procfs.Alive(pid) {
		t.Fatalf("the killed command %d still runs", pid)
	}
	if err := other.KillCommandPID(ctx, pid); !errors.Is(err, machine.ErrNoCommand) {
		t.Fatalf("killing the pid of an ended command: %v", err)
	}

	if err := c.CloseCommandInput(ctx, cmd.ID()); err != nil {
		t.Fatal(err)
	}
	st, err := cmd.Wait(ctx)
	if err != nil || st.ExitCode == nil || *st.ExitCode != 7 {
		t.Fatalf("after its input ended: %+v, %v", st, err)
	}
	out, err := other.CommandOutput(ctx, cmd.ID(), 0, 0)
	if err != nil || out.Output != "started\ngot hello\nbye\n" || out.End != out.Total || out.Cut != 0 {
		t.Fatalf("its output: %+v, %v", out, err)
	}
	if err := other.CommandInput(ctx, cmd.ID(), "late\n"); !errors.Is(err, machine.ErrCommandEnded) {
		t.Fatalf("input after the end: %v", err)
	}
	if got := rec.take(); len(got) != 1 {
		t.Fatalf("judged %+v; want only the late input", got)
	}

	if err := cmd.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sleeper.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{
		"removed":  cmd.ID(),
		"unknown":  filepath.Join(os.TempDir(), "shinken-cmd.Zz000000"),
		"not ours": "/etc",
		"empty":    "",
	} {
		if _, err := c.CommandOutput(ctx, id, 0, 0); !errors.Is(err, machine.ErrNoCommand) {
			t.Errorf("%s: output: %v", name, err)
		}
		if err := c.CommandInput(ctx, id, "x"); !errors.Is(err, machine.ErrNoCommand) {
			t.Errorf("%s: input: %v", name, err)
		}
		if err := c.KillCommand(ctx, id); !errors.Is(err, machine.ErrNoCommand) {
			t.Errorf("%s: kill: %v", name, err)
		}
	}
	// Input to a well-formed handle is judged before the handle is found;
	// reads, lists and kills never are.
	for _, in := range rec.take() {
		if in.Line != "x" {
			t.Fatalf("judged %+v; want only the inputs", in)
		}
	}
}

// TestCommandOutputBounded: the output kept is bounded, a read from an
// offset no longer kept says how much was cut, and reads in chunks
// follow on from each other.
func TestCommandOutputBounded(t *testing.T) {
	dial, _ := commandRig(t, 0)
	c := dial()
	ctx := t.Context()
	cmd, err := c.StartCommand(ctx, "seq 1 100000", &machine.CommandOptions{KeepOutput: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Remove(context.WithoutCancel(ctx))
	if st, err := cmd.Wait(ctx); err != nil || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("%+v, %v", st, err)
	}
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintln(&want, i)
	}
	all := want.String()
	out, err := c.CommandOutput(ctx, cmd.ID(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if out.Total != int64(len(all)) || out.Cut == 0 || out.Cut != out.From || out.End != out.From+100 || out.Output != all[out.From:out.End] {
		t.Fatalf("a read from 0: from %d end %d total %d cut %d; want a total of %d", out.From, out.End, out.Total, out.Cut, len(all))
	}
	if kept := out.Total - out.From; kept > 16<<10 || kept < 8<<10 {
		t.Fatalf("%d bytes kept; want 8 to 16 KiB", kept)
	}
	var got strings.Builder
	for off := out.From; off < out.Total; {
		r, err := c.CommandOutput(ctx, cmd.ID(), off, 3000)
		if err != nil || r.From != off || r.Cut != 0 {
			t.Fatalf("read at %d: %+v, %v", off, r, err)
		}
		got.WriteString(r.Output)
		off = r.End
	}
	if got.String() != all[out.From:] {
		t.Fatal("the chunked reads do not give the kept output")
	}
}

// TestCommandSessionEnd: a background command lives past the exec
// MaxTimeout, and ends, with everything it started (whether it left the
// process group and the session or not), when the session that started
// it ends; a listing then drops it.
func TestCommandSessionEnd(t *testing.T) {
	dial, _ := commandRig(t, time.Second)
	c, other := dial(), dial()
	d := t.TempDir()
	job := `read -r p _ </proc/self/stat; echo $p >"$0.t"; mv "$0.t" "$0"; exec sleep 1000`
	line := fmt.Sprintf(`(setsid sh -c '%[2]s' %[1]s/1 &); (sh -c '%[2]s' %[1]s/2 &); sh -c '%[2]s' %[1]s/3`, d, job)
	cmd, err := c.StartCommand(t.Context(), line, nil)
	if err != nil {
		t.Fatal(err)
	}
	pids := proctest.PIDFiles(t, d, proctest.Numbered(3)...)
	// Past the MaxTimeout: a plain exec of a second times out.
	if res, err := other.Exec(t.Context(), &aci.ExecRequest{Argv: []string{"sleep", "3"}}); err != nil || !res.TimedOut {
		t.Fatalf("a plain exec past the MaxTimeout: %+v, %v", res, err)
	}
	if ci := listed(t, other, cmd.ID()); ci == nil || !ci.Running {
		t.Fatalf("past the MaxTimeout: %+v", ci)
	}
	proctest.Alive(t, pids...)
	c.Close()
	<-cmd.Done()
	proctest.Gone(t, pids...)
	if ci := listed(t, other, cmd.ID()); ci != nil {
		t.Fatalf("listed after its session ended: %+v", ci)
	}
	if _, err := other.CommandOutput(t.Context(), cmd.ID(), 0, 0); !errors.Is(err, machine.ErrNoCommand) {
		t.Fatalf("reading it after its session ended: %v", err)
	}
}
