package escouade_test

import (
	"context"
	"os"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

var jsSteps = []string{
	"lang", "secrets/get", "settings/get", "files/read", "console", "methodNotFound",
	"setTimeout, clearTimeout, setInterval",
	"fs/write, fs/read, fs/stat, fs/list, fs/canon",
	"proc/spawn, proc/out, proc/exit", "proc/write, proc/kill",
	"fetch", "net/stream, net/chunk, net/credit, net/end", "net/cancel",
	"WebSocket", "TextEncoder",
}

func jsPluginSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("testdata/jsplugin/main.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// TestJSPluginCallsEveryMethod runs a script that calls every method a
// plugin in WASM may call, through the prelude's fetch, setTimeout,
// WebSocket, console and escouade; every line of the Host is checked
// against the schema.
func TestJSPluginCallsEveryMethod(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, j := allMethodsHost(t, f, v, "js")
	dir := writePlugin(t, "js", `"run":{"js":"main.js"},`+allMethodsManifest,
		map[string]string{"main.js": jsPluginSource(t), "data.txt": "some data"})
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if caps := p.Capabilities(); caps["steps"] != true {
		t.Errorf("capabilities %v", caps)
	}
	d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r", Kind: "command"}, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Allow || d.Message != "js fr" {
		t.Errorf("Decide = %+v, %v", d, err)
	}
	runSteps(t, h, j, "js", jsSteps)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.need(t, "initialize", "events/fact", "permissions/decide", "shutdown",
		"timer/fired", "proc/out", "proc/exit", "net/chunk", "net/end", "ws/message", "ws/closed",
		"result:secrets/get", "result:settings/get", "result:files/read", "result:timer/set",
		"result:fs/write", "result:fs/read", "result:fs/stat", "result:fs/list", "result:fs/canon",
		"result:proc/spawn", "result:proc/write", "result:proc/kill",
		"result:net/fetch", "result:net/stream", "result:ws/open", "result:ws/send", "result:ws/close",
		"error:refused", "error:methodNotFound")
}

// startJS starts the test script as plugin id.
func startJS(t *testing.T, opts *escouade.Options, id string) (*escouade.Host, *journal, *escouade.Plugin) {
	t.Helper()
	if opts.Projects == nil {
		opts.Projects = escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}}
	}
	h, j := hookedHost(t, nil, nil, opts)
	dir := writePlugin(t, id, `"run":{"js":"main.js"},"permissions":{"events":["agent.created"]}`,
		map[string]string{"main.js": jsPluginSource(t)})
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatalf("%v; the journal holds:\n%s", err, j.dump())
	}
	return h, j, p
}

func fact(t *testing.T, h *escouade.Host, mode string) {
	t.Helper()
	if _, err := h.Fact(context.Background(), "agent.created", map[string]any{"mode": mode}, escouade.About{Project: "p"}); err != nil {
		t.Fatal(err)
	}
}

// TestJSEndlessLoop has a hostile script loop without end in a handler:
// the turn is interrupted, the instance ends, and the Host restarts it
// within the crash budget, then disables it past the budget.
func TestJSEndlessLoop(t *testing.T) {
	h, j, p := startJS(t, &escouade.Options{ScriptTurn: 100 * time.Millisecond, CrashBudget: 2}, "spin")
	for i := range 3 {
		waitFor(t, "the plugin running", func() bool { return p.State() == escouade.StateRunning })
		before := len(j.find("spin", "plugin restarted"))
		fact(t, h, "spin")
		if i < 2 {
			waitFor(t, "a restart", func() bool { return len(j.find("spin", "plugin restarted")) > before })
		}
	}
	j.wait(t, "spin", "plugin disabled")
	if len(j.find("spin", "script interrupted: a turn ran past 100ms")) != 3 {
		t.Errorf("the journal holds:\n%s", j.dump())
	}
}

// TestJSHeapBound has a script allocate without end: the heap's bound
// interrupts it, before the turn's time does.
func TestJSHeapBound(t *testing.T) {
	h, j, p := startJS(t, &escouade.Options{ScriptTurn: 20 * time.Second, ScriptHeap: 64 << 20}, "grow")
	fact(t, h, "grow")
	j.wait(t, "grow", "script interrupted: a turn grew the heap past 64 MiB")
	j.wait(t, "grow", "plugin restarted")
	waitFor(t, "the plugin running", func() bool { return p.State() == escouade.StateRunning })
}

// TestJSHandlerThrows checks that an exception in a handler is the
// plugin's: journaled, and the instance goes on.
func TestJSHandlerThrows(t *testing.T) {
	h, j, p := startJS(t, &escouade.Options{}, "throw")
	fact(t, h, "throw")
	j.wait(t, "throw", "a handler that throws")
	if p.State() != escouade.StateRunning || len(j.find("throw", "plugin ended")) > 0 {
		t.Errorf("state %s; the journal holds:\n%s", p.State(), j.dump())
	}
}
