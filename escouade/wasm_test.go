package escouade_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

// everyStep are the checks the test plugins report, in Go and in
// JavaScript, one "ok <step>" each.
var wasmSteps = []string{
	"lang", "secrets/get", "secrets/get by a line", "settings/get", "files/read", "log",
	"methodNotFound", "invalidParams",
	"timer/set, timer/cancel, timer/fired",
	"fs/write, fs/read, fs/stat, fs/list, fs/canon",
	"proc/spawn, proc/out, proc/exit", "proc/write, proc/kill",
	"net/fetch", "net/stream, net/chunk, net/credit, net/end", "net/cancel",
	"ws/open, ws/send, ws/message, ws/close, ws/closed",
}

// allMethodsManifest is the manifest of the plugins that call every method.
const allMethodsManifest = `"permissions":{"events":["agent.created"],"decide":true,"secrets":["token"],
	"network":["api.example.com"],"files":{"temp":"write","plugin":"read"},"commands":["echo hello *","cat"]},
	"contributes":{"settings":{"color":{"type":"string","default":"red"}}}`

// allMethodsHost returns a Host for the plugins that call every method.
func allMethodsHost(t *testing.T, f *netFixture, v *validator, id string) (*escouade.Host, *journal) {
	return hookedHost(t, f, v, &escouade.Options{
		Lang:     "fr",
		Secrets:  escouade.SecretMap{id: {"token": "s3cret"}},
		Settings: &escouade.FileSettings{User: map[string]map[string]any{id: {"color": "blue"}}},
		Projects: escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}},
	})
}

// runSteps publishes the fact that makes a test plugin run its checks, and
// checks that each passed.
func runSteps(t *testing.T, h *escouade.Host, j *journal, id string, steps []string) {
	t.Helper()
	if _, err := h.Fact(context.Background(), "agent.created", map[string]any{"mode": "all"}, escouade.About{Project: "p"}); err != nil {
		t.Fatal(err)
	}
	j.wait(t, id, "done")
	for _, e := range j.find(id, "fail ") {
		t.Error(e.msg)
	}
	for _, s := range steps {
		if len(j.find(id, "ok "+s)) == 0 {
			t.Errorf("the plugin never said ok %s", s)
		}
	}
}

// TestWASMPluginCallsEveryMethod runs the Go plugin built for wasip1: it
// calls every method a plugin in WASM may call, by escouade.call and by
// lines, and every message and answer of the Host is checked against the
// schema.
func TestWASMPluginCallsEveryMethod(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, j := allMethodsHost(t, f, v, "wasm")
	dir := writePlugin(t, "wasm", `"run":{"wasm":"plugin.wasm"},`+allMethodsManifest, map[string]string{"data.txt": "some data"})
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), wasmPlugin, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r", Kind: "command"}, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Allow || d.Message != "wasm fr" {
		t.Errorf("Decide = %+v, %v", d, err)
	}
	runSteps(t, h, j, "wasm", wasmSteps)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.need(t, "initialize", "events/fact", "permissions/decide", "shutdown",
		"timer/fired", "proc/out", "proc/exit", "net/chunk", "net/end", "ws/message", "ws/closed",
		"result:secrets/get", "result:settings/get", "result:files/read", "result:timer/set",
		"result:fs/write", "result:fs/read", "result:fs/stat", "result:fs/list", "result:fs/canon",
		"result:proc/spawn", "result:proc/write", "result:proc/kill",
		"result:net/fetch", "result:net/stream", "result:ws/open", "result:ws/send", "result:ws/close",
		"error:refused", "error:methodNotFound", "error:invalidParams")
}

// wasmHost starts the test module as plugin id in a fresh Host.
func startWASM(t *testing.T, opts *escouade.Options, id string) (*escouade.Host, *journal, *escouade.Plugin) {
	t.Helper()
	if opts == nil {
		opts = &escouade.Options{}
	}
	if opts.Projects == nil {
		opts.Projects = escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}}
	}
	h, j := hookedHost(t, nil, nil, opts)
	dir := writePlugin(t, id, `"run":{"wasm":"plugin.wasm"},"permissions":{"events":["agent.created"]}`, nil)
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), wasmPlugin, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return h, j, p
}

// TestWASMMemoryCap has the module allocate without end: memory.grow fails
// at the cap, the module dies of it, and the Host restarts it within the
// crash budget, then disables it past the budget.
func TestWASMMemoryCap(t *testing.T) {
	h, j, p := startWASM(t, &escouade.Options{WASMMemoryPages: 1024, CrashBudget: 1, ScriptTurn: 20 * time.Second}, "grow")
	for i := range 2 {
		waitFor(t, "the plugin running", func() bool { return p.State() == escouade.StateRunning })
		if _, err := h.Fact(context.Background(), "agent.created", map[string]any{"mode": "grow"}, escouade.About{Project: "p"}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			j.wait(t, "grow", "plugin restarted")
		}
	}
	j.wait(t, "grow", "plugin disabled")
	if e := j.find("grow", "out of memory"); len(e) == 0 {
		t.Errorf("the module did not say it ran out of memory; the journal holds:\n%s", j.dump())
	}
}

// TestWASMLoopEnds has the module loop without end: stopping the plugin
// ends it all the same.
func TestWASMLoopEnds(t *testing.T) {
	h, _, p := startWASM(t, &escouade.Options{StopGrace: 100 * time.Millisecond}, "spin")
	if _, err := h.Fact(context.Background(), "agent.created", map[string]any{"mode": "spin"}, escouade.About{Project: "p"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p.State() != escouade.StateStopped {
		t.Errorf("state %s", p.State())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the stop took %v", d)
	}
}

// TestWASMCompilationCache checks that a Host finds the module compiled
// in the cache folder by an earlier one: the cache's files are not written
// again.
func TestWASMCompilationCache(t *testing.T) {
	cache := wasmCache(t)
	h, _, p := startWASM(t, &escouade.Options{WASMCacheDir: cache}, "cached")
	p.Stop(context.Background())
	h.Close(context.Background())
	before := cacheFiles(t, cache)
	if len(before) == 0 {
		t.Fatal("the cache holds nothing after a start")
	}
	h, _, p = startWASM(t, &escouade.Options{WASMCacheDir: cache}, "cached")
	p.Stop(context.Background())
	h.Close(context.Background())
	after := cacheFiles(t, cache)
	for name, mod := range before {
		if !after[name].Equal(mod) {
			t.Errorf("%s was written again: compiled again", name)
		}
	}
}

// cacheFiles lists the files of a cache folder with their times.
func cacheFiles(t *testing.T, dir string) map[string]time.Time {
	files := map[string]time.Time{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				files[path] = fi.ModTime()
			}
		}
		return nil
	})
	return files
}

// TestInProcessStartErrors checks that a module or a script that does not load
// fails the start with a reason, and that run.command plugins are still
// refused the in-process methods (TestHostMessagesValidate).
func TestInProcessStartErrors(t *testing.T) {
	h, _ := hookedHost(t, nil, nil, nil)
	for name, files := range map[string]map[string]string{
		"badwasm": {"plugin.wasm": "not a module"},
		"badjs":   {"main.js": "function ("},
		"nowasm":  {},
	} {
		run := `"run":{"wasm":"plugin.wasm"}`
		if strings.HasSuffix(name, "js") {
			run = `"run":{"js":"main.js"}`
		}
		dir := writePlugin(t, name, run, files)
		if _, err := h.Start(context.Background(), dir); err == nil {
			t.Errorf("%s started", name)
		}
	}
}
