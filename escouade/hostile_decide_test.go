package escouade_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// The hostile-plugin suite: plugins that crash, race, inject and lie, each
// case checking that the Host stays up, the other plugins are unaffected,
// the answer carries the protocol's code, and nothing leaks (TestMain
// checks goroutines and processes after the run).

// TestHostileGuardPastItsBudget: a guard that denies, but crashes on some
// requests, is restarted within its budget, then disabled; while it
// restarts and once it is disabled it counts as ask, so another plugin's
// allow never wins, until the guard is removed.
func TestHostileGuardPastItsBudget(t *testing.T) {
	v := newValidator(t)
	h, j := newHost(t, &escouade.Options{CrashBudget: 1, Backoff: time.Millisecond, Projects: escouade.ProjectMap{
		"p": {Project: protocol.Project{ID: "p", Name: "P"}},
	}})
	ctx := context.Background()
	var lives atomic.Int32
	guard, err := h.StartFunc(ctx, parseManifest(t, "guard", `,"permissions":{"decide":true}`), "", v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
		if lives.Add(1) > 1 {
			return errors.New("crashed at start")
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return plugin.Serve(ctx, in, out, plugin.Handlers{
			Decide: func(context.Context, *plugin.Conn, protocol.DecideParams) (protocol.Decision, error) {
				cancel() // crashes on its first request
				return protocol.Decision{Verdict: protocol.Deny, Message: "never"}, nil
			},
		})
	}))
	if err != nil {
		t.Fatal(err)
	}
	connect(t, h, v, "lax", `,"permissions":{"decide":true}`, "", decider(protocol.Decision{Verdict: protocol.Allow}, 0))
	bystander := newSink()
	connect(t, h, v, "bystander", `,"permissions":{"events":["ticket.report"]}`, "", bystander.handlers())

	req := protocol.PermissionRequest{ID: "r1", Kind: "command", Tool: "exec", Input: map[string]any{"command": "rm -rf /"}}
	if d, err := h.Decide(ctx, req, escouade.About{Project: "p"}); err != nil || d.Verdict == protocol.Allow {
		t.Fatalf("while the guard crashes: %+v, %v", d, err)
	}
	j.wait(t, "guard", "disabled")
	waitFor(t, "the guard is disabled", func() bool { return guard.State() == escouade.StateDisabled })
	for i := range 3 {
		d, err := h.Decide(ctx, req, escouade.About{Project: "p"})
		if err != nil || d.Verdict != protocol.Ask || d.Plugin != "guard" {
			t.Fatalf("decision %d with the guard disabled: %+v, %v; want ask from the guard", i, d, err)
		}
	}
	// The others are unaffected.
	h.Fact(ctx, "ticket.report", nil, escouade.About{})
	waitFor(t, "the bystander's fact", func() bool { return len(bystander.names()) == 1 })

	// Removed by a person, the guard no longer counts.
	if err := guard.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if d, err := h.Decide(ctx, req, escouade.About{Project: "p"}); err != nil || d.Verdict != protocol.Allow {
		t.Fatalf("with the guard removed: %+v, %v", d, err)
	}
}

// protocolExample is a guard written from the protocol's own example of a
// request's input ({command: 'npm test'}): it reads input.command alone,
// and denies what deletes files or says "forbidden".
func protocolExample(seen chan<- protocol.PermissionRequest) plugin.Handlers {
	return plugin.Handlers{Decide: func(_ context.Context, _ *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		seen <- p.Request
		command, _ := p.Request.Input["command"].(string)
		if strings.HasPrefix(command, "rm ") || strings.Contains(command, "forbidden") {
			return protocol.Decision{Verdict: protocol.Deny, Message: "not that"}, nil
		}
		return protocol.Decision{Verdict: protocol.Allow}, nil
	}}
}

// TestHostileExecForms: through the gate, every form of exec (an argv, a
// shell line, sh -c in either) reaches a guard written from the protocol's
// example as one command line, with the structured argv, cwd and env; a
// deny is a refusal the runtime reports as permission_denied.
func TestHostileExecForms(t *testing.T) {
	v := newValidator(t)
	h, _ := newHost(t, &escouade.Options{Projects: escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}}})
	seen := make(chan protocol.PermissionRequest, 1)
	connect(t, h, v, "example", `,"permissions":{"decide":true}`, "", protocolExample(seen))
	g := gate.New(h, &gate.Options{Project: "p", OnAsk: protocol.Allow})
	ctx := context.Background()
	shell := func(s string) *string { return &s }
	tests := []struct {
		name    string
		verb    aci.Verb
		action  aci.Action
		command string
		argv    []string
		denied  bool
	}{
		{"argv", aci.VerbExec, aci.Action{Argv: []string{"npm", "test"}}, "npm test", []string{"npm", "test"}, false},
		{"shell", aci.VerbExec, aci.Action{Shell: shell("npm test && echo ok")}, "npm test && echo ok", []string{"/bin/sh", "-c", "npm test && echo ok"}, false},
		{"argv rm", aci.VerbExec, aci.Action{Argv: []string{"rm", "-rf", "/"}}, "rm -rf /", []string{"rm", "-rf", "/"}, true},
		{"shell rm", aci.VerbExec, aci.Action{Shell: shell("rm -rf /")}, "rm -rf /", []string{"/bin/sh", "-c", "rm -rf /"}, true},
		{"argv sh -c", aci.VerbExec, aci.Action{Argv: []string{"sh", "-c", "echo forbidden"}}, "sh -c 'echo forbidden'", []string{"sh", "-c", "echo forbidden"}, true},
		{"shell sh -c", aci.VerbExec, aci.Action{Shell: shell(`sh -c "echo forbidden"`)}, `sh -c "echo forbidden"`, []string{"/bin/sh", "-c", `sh -c "echo forbidden"`}, true},
		{"launch_app", aci.VerbLaunchApp, aci.Action{App: shell("xterm"), Args: []string{"-e", "echo forbidden"}}, "xterm -e 'echo forbidden'", []string{"xterm", "-e", "echo forbidden"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.action
			a.Verb = tt.verb
			if tt.verb == aci.VerbExec {
				a.Cwd, a.Env = shell("/repo"), map[string]string{"CI": "1"}
			}
			err := g.Authorize(ctx, shinken.AuthRequest{Verb: tt.verb, Action: &a})
			if tt.denied != (err != nil) {
				t.Fatalf("Authorize = %v, denied should be %v", err, tt.denied)
			}
			if err != nil && !errors.Is(err, protocol.ErrRefused) {
				t.Errorf("a refusal that is not ErrRefused: %v", err)
			}
			req := <-seen
			in, err := req.Command()
			if err != nil {
				t.Fatal(err)
			}
			if req.Kind != "command" || req.Tool != string(tt.verb) || in.Command != tt.command || !slices.Equal(in.Argv, tt.argv) {
				t.Errorf("the plugin saw %s %s %q %q", req.Kind, req.Tool, in.Command, in.Argv)
			}
			if tt.verb == aci.VerbExec && (in.Cwd != "/repo" || in.Env["CI"] != "1") {
				t.Errorf("cwd %q env %v", in.Cwd, in.Env)
			}
		})
	}
}

// TestHostileExecWhatRuns: the forms that passed a guard matching the
// start of input.command (bash -c, \rm, env rm), and an argv "git status"
// with PATH set to a folder the agent wrote, each run something else than
// they read as. A guard written from what the gate shows of what runs
// (input.commands and their programs, input.dynamic) refuses them all,
// with no shell parser of its own, and allows the plain git status.
func TestHostileExecWhatRuns(t *testing.T) {
	v := newValidator(t)
	h, _ := newHost(t, nil) // no Projects: the gate asks about the default project
	planted := t.TempDir()
	if err := os.WriteFile(filepath.Join(planted, "git"), []byte("#!/bin/sh\necho the agent's own code\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	trusted := []string{"/usr/bin/", "/bin/", "/usr/local/bin/"}
	connect(t, h, v, "careful", `,"permissions":{"decide":true}`, "", plugin.Handlers{Decide: func(_ context.Context, _ *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		in, err := p.Request.Command()
		if err != nil || in.Dynamic {
			return protocol.Decision{Verdict: protocol.Deny, Message: "cannot tell what runs"}, nil
		}
		for _, c := range in.Commands {
			if c.Argv[0] == "rm" || filepath.Base(c.Argv[0]) == "rm" {
				return protocol.Decision{Verdict: protocol.Deny, Message: "no rm"}, nil
			}
			if c.Program != "" && !slices.ContainsFunc(trusted, func(dir string) bool { return strings.HasPrefix(c.Program, dir) }) {
				return protocol.Decision{Verdict: protocol.Deny, Message: "not a program of the system: " + c.Program}, nil
			}
		}
		return protocol.Decision{Verdict: protocol.Allow}, nil
	}})
	g := gate.New(h, nil)
	shell := func(s string) *string { return &s }
	for _, tt := range []struct {
		name   string
		action aci.Action
		denied bool
	}{
		{"git status", aci.Action{Argv: []string{"git", "status"}}, false},
		{"bash -c", aci.Action{Argv: []string{"bash", "-c", "rm -rf /"}}, true},
		{"backslash rm", aci.Action{Shell: shell(`\rm -rf /`)}, true},
		{"env rm", aci.Action{Shell: shell("env rm -rf /")}, true},
		{"a PATH the agent wrote", aci.Action{Argv: []string{"git", "status"}, Env: map[string]string{"PATH": planted}}, true},
		{"a shell line's PATH", aci.Action{Shell: shell("PATH=" + planted + " git status")}, true},
		{"a variable", aci.Action{Shell: shell("$0 -rf /")}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.action
			a.Verb = aci.VerbExec
			err := g.Authorize(context.Background(), shinken.AuthRequest{Verb: aci.VerbExec, Action: &a})
			if tt.denied != (err != nil) {
				t.Errorf("Authorize = %v, denied should be %v", err, tt.denied)
			}
			if err != nil && !errors.Is(err, protocol.ErrRefused) {
				t.Errorf("not a refusal: %v", err)
			}
		})
	}
}

// TestHostileFetchCutAtDeadline: a server that sends half its body and
// then nothing is answered failed at the fetch's deadline, never success
// with the half.
func TestHostileFetchCutAtDeadline(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, _ := hookedHost(t, f, nil, nil)
	lp := startLinePlugin(t, h, v, "cut", `,"permissions":{"network":["example.com"]},"limits":{"fetchMs":200}`, "")
	for range 5 {
		var r fetchResult
		err := lp.call("net/fetch", map[string]any{"url": "https://api.example.com/halfway"}, &r)
		wantCode(t, "a body cut at the deadline", err, protocol.CodeFailed)
		if r.Body != nil {
			t.Fatalf("a cut body answered: %q", *r.Body)
		}
	}
}

// TestHostileNameOntoTheMachine: an allowed name that resolves to one of
// this machine's own addresses, or its on-link networks, is refused,
// whatever the static table calls them, and nothing is dialled.
func TestHostileNameOntoTheMachine(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, _ := hookedHost(t, f, nil, nil)
	lp := startLinePlugin(t, h, v, "onto", `,"permissions":{"network":["example.com"]}`, "")
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range ifAddrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, _ := netip.AddrFromSlice(ipn.IP)
		name := fmt.Sprintf("h%d.example.com", i)
		f.resolve(name, []netip.Addr{ip.Unmap()})
		wantCode(t, "a name onto "+ip.String(), lp.call("net/fetch", map[string]any{"url": "https://" + name + "/hello"}, nil), protocol.CodeRefused)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.dialed) != 0 {
		t.Errorf("dialled %v", f.dialed)
	}
}

// TestHostileStartAll: a plugin silent at initialize, two folders that
// claim one id and a manifest that does not hold keep none of the others
// from starting; each faulty folder is journaled and returned.
func TestHostileStartAll(t *testing.T) {
	withTranscript(t, newValidator(t))
	h, j := newHost(t, nil)
	good := writePlugin(t, "good", commandManifest("good"), nil)
	mute := writePlugin(t, "mute", commandManifest("mute"), nil)
	twinA := writePlugin(t, "twin", commandManifest("good"), nil)
	twinB := writePlugin(t, "twin", commandManifest("good"), nil)
	bad := writePlugin(t, "bad", `"run":{"command":["../../bin/sh"]}`, nil)
	// The mute plugin fails at initialize's own timeout (10 s, the
	// protocol's): the context only bounds a hang, so that a loaded
	// machine's slow start of the good one is not taken for a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started, errs := h.StartAll(ctx, []string{mute, twinA, good, bad, twinB})
	if len(started) != 1 || started[0].ID() != "good" || started[0].State() != escouade.StateRunning {
		t.Fatalf("started %v", started)
	}
	failed := map[string]bool{}
	for _, err := range errs {
		var se *escouade.StartError
		if !errors.As(err, &se) {
			t.Fatalf("%v is not a StartError", err)
		}
		failed[se.Dir] = true
	}
	for _, d := range []string{mute, twinA, twinB, bad} {
		if !failed[d] {
			t.Errorf("%s is not among the failures: %v", d, errs)
		}
	}
	if !errors.Is(errors.Join(errs...), escouade.ErrDuplicate) {
		t.Errorf("the twins are not ErrDuplicate: %v", errs)
	}
	if n := len(j.find("", "plugin not started")); n != 4 {
		t.Errorf("%d failures journaled:\n%s", n, j.dump())
	}
	if h.Plugin("twin") != nil || h.Plugin("mute") != nil {
		t.Error("a faulty plugin is loaded")
	}
}

// TestHostileSecretsOfAnotherFolder: a folder that claims another plugin's
// id reads none of the secrets bound to that plugin's folder.
func TestHostileSecretsOfAnotherFolder(t *testing.T) {
	real := writePlugin(t, "jira", commandManifest("good")+`,"permissions":{"secrets":["token"]}`, nil)
	impostor := writePlugin(t, "jira", commandManifest("good")+`,"permissions":{"secrets":["token"]}`, nil)
	realDir, _ := filepath.EvalSymlinks(real)
	secrets := escouade.SecretMap{"jira@" + realDir: {"token": "t0k"}}
	v := newValidator(t)
	for dir, want := range map[string]string{impostor: "", real: "t0k"} {
		h, _ := newHost(t, &escouade.Options{Secrets: secrets})
		m, err := manifest.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		hs, conns := capture()
		p, err := h.StartFunc(context.Background(), m, dir, v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
			return plugin.Serve(ctx, in, out, hs)
		}))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := (<-conns).Secret(context.Background(), "token")
		if err != nil || got != want {
			t.Errorf("the folder %s read %q, %v; want %q", dir, got, err, want)
		}
		p.Stop(context.Background())
	}
}

// TestHostileImpostorFirst: a folder that claims a plugin's id and starts
// first keeps the real one out (the id is the plugin's identity, and it
// reads none of the real folder's secrets, TestHostileSecretsOfAnotherFolder);
// the refusal names both folders, so that a person sees which one to
// remove, and the journal says so.
func TestHostileImpostorFirst(t *testing.T) {
	h, _ := newHost(t, nil)
	impostor := writePlugin(t, "jira", commandManifest("good"), nil)
	real := writePlugin(t, "jira", commandManifest("good"), nil)
	if _, err := h.Start(context.Background(), impostor); err != nil {
		t.Fatal(err)
	}
	_, err := h.Start(context.Background(), real)
	if !errors.Is(err, escouade.ErrDuplicate) || !strings.Contains(err.Error(), impostor) || !strings.Contains(err.Error(), real) {
		t.Errorf("the second folder's refusal: %v; want ErrDuplicate naming %s and %s", err, impostor, real)
	}
}
