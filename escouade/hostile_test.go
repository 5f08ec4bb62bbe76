package escouade_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/procfs"
)

// The hostile-plugin suite for the engines of run.js and run.wasm: each
// probe once took the whole process down, kept a core busy after Close, or
// grew the Host's memory without bound. Isolated, each costs its own
// engine's process alone: the Host stays up, the other plugins are not
// touched, the decision the hostile plugin was asked for counts as ask,
// the engine is restarted within the crash budget and disabled past it,
// and no process or goroutine is left (TestMain checks both at the end).

// guardJS is a well-behaved decider: it denies the kind "rm", allows the
// rest.
const guardJS = `escouade.onDecide((p) => p.request.kind === "rm" ? { decision: "deny", message: "guard: no rm" } : { decision: "allow" });`

// hostileJS is a decider that runs probe when asked.
func hostileJS(probe string) string {
	return `escouade.onDecide((p) => { ` + probe + `; return { decision: "allow" }; });`
}

// scriptProbes are the scripts that once beat the in-process engine, by
// class: a recursion in goja's Go code (a fatal stack overflow), a native
// call that never looks at the interrupt, an allocation without bound.
var scriptProbes = []struct {
	name, probe string
	later       bool // the probe does its harm after its answer
}{
	{name: "json-parse-deep", probe: `JSON.parse("[".repeat(1e7))`},
	{name: "regexp-nested", probe: `new RegExp("(".repeat(1e7) + ")".repeat(1e7))`},
	// A lookahead makes goja backtrack (regexp2) rather than use RE2.
	{name: "regexp-backtrack", probe: `/^(a+)+(?!x)$/.test("a".repeat(40) + "b")`},
	{name: "join-sparse", probe: `const a = []; a.length = 4294967295; a.join(",")`},
	{name: "stringify-deep", probe: `let o = {}; for (let i = 0; i < 250000; i++) o = { a: o }; JSON.stringify(o)`},
	{name: "array-fill", probe: `Array(2e7).fill(0); Array(2e7).fill(1); Array(2e7).fill(2)`},
	{name: "typed-array", probe: `const keep = []; for (;;) keep.push(new Uint8Array(768 * 1024 * 1024).fill(1))`},
	{name: "timer-alloc", probe: `const keep = []; setInterval(() => keep.push(new Uint8Array(64 << 20).fill(1)), 1)`, later: true},
}

// hostileOptions bound the engines tightly, so that each probe ends soon.
func hostileOptions() *escouade.Options {
	return &escouade.Options{
		ScriptTurn:   200 * time.Millisecond,
		EngineMemory: 256 << 20,
		CrashBudget:  1,
		Projects:     escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}},
	}
}

func TestHostileScripts(t *testing.T) {
	for _, pr := range scriptProbes {
		t.Run(pr.name, func(t *testing.T) {
			h, j := hookedHost(t, nil, newValidator(t), hostileOptions())
			guard := startScript(t, h, "guard", guardJS)
			guardPid := enginePid(t, "guard")
			hostile := startScript(t, h, "hostile", hostileJS(pr.probe))
			for life := range 2 {
				waitFor(t, "the hostile plugin running", func() bool { return hostile.State() == escouade.StateRunning })
				pid := enginePid(t, "hostile")
				ended := len(j.find("hostile", "plugin ended unasked"))
				d := decide(t, h, "command")
				if !pr.later && d.Verdict != protocol.Ask {
					t.Errorf("life %d: Decide = %+v, want ask: the hostile plugin failed to answer", life, d)
				}
				waitFor(t, "the engine's end", func() bool { return len(j.find("hostile", "plugin ended unasked")) > ended })
				waitFor(t, "the engine's process gone", func() bool { return !procfs.Alive(pid) })
				if life == 0 {
					j.wait(t, "hostile", "plugin restarted")
				}
			}
			j.wait(t, "hostile", "plugin disabled: it crashed past its budget")
			if hostile.State() != escouade.StateDisabled {
				t.Errorf("hostile: state %s", hostile.State())
			}
			// The other plugin was never touched: the same process, and
			// its deny still wins.
			if guard.State() != escouade.StateRunning || enginePid(t, "guard") != guardPid {
				t.Errorf("guard: state %s, pid %d then %d", guard.State(), guardPid, enginePid(t, "guard"))
			}
			if d := decide(t, h, "rm"); d.Verdict != protocol.Deny || d.Plugin != "guard" {
				t.Errorf("Decide(rm) = %+v", d)
			}
			if len(j.find("guard", "plugin ended")) > 0 {
				t.Errorf("the guard ended; the journal holds:\n%s", j.dump())
			}
		})
	}
}

// TestHostileNoCPUAfterClose has a script spin in a native call, and
// closes the Host meanwhile: its engine's process is gone once Close
// returns, and burns no core.
func TestHostileNoCPUAfterClose(t *testing.T) {
	o := hostileOptions()
	o.ScriptTurn = time.Hour // only Close ends it
	h, j := hookedHost(t, nil, newValidator(t), o)
	startScript(t, h, "spin", hostileJS(`/^(a+)+(?!x)$/.test("a".repeat(40) + "b")`))
	pid := enginePid(t, "spin")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	go h.Decide(ctx, protocol.PermissionRequest{ID: "r", Kind: "command"}, escouade.About{Project: "p"})
	j.wait(t, "spin", "permissions/decide: no answer in time")
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if procfs.Alive(pid) {
		t.Errorf("the engine's process %d outlived Close", pid)
	}
	if pids := enginePids("spin"); len(pids) > 0 {
		t.Errorf("engine processes left: %v", pids)
	}
}

// TestHostileCPUBound has a script burn CPU in short turns, each within
// the turn's bound: the kernel's bound on the engine's CPU time ends it.
func TestHostileCPUBound(t *testing.T) {
	o := hostileOptions()
	o.ScriptTurn = 10 * time.Second
	o.EngineCPU = time.Second
	h, j := hookedHost(t, nil, newValidator(t), o)
	guard := startScript(t, h, "guard", guardJS)
	hostile := startScript(t, h, "burn", hostileJS(`setInterval(() => { const t = Date.now(); while (Date.now() - t < 50) {} }, 0)`))
	for life := range 2 {
		waitFor(t, "the hostile plugin running", func() bool { return hostile.State() == escouade.StateRunning })
		ended := len(j.find("burn", "plugin ended unasked"))
		decide(t, h, "command")
		waitFor(t, "the engine's end", func() bool { return len(j.find("burn", "plugin ended unasked")) > ended })
		if life == 0 {
			j.wait(t, "burn", "plugin restarted")
		}
	}
	j.wait(t, "burn", "plugin disabled: it crashed past its budget")
	for _, e := range j.find("burn", "plugin ended unasked") {
		if e.attrs["status"] != "signal: killed" {
			t.Errorf("ended %q, want killed by the kernel", e.attrs["status"])
		}
	}
	if guard.State() != escouade.StateRunning {
		t.Errorf("guard: state %s", guard.State())
	}
}

// TestHostileModules has a module loop without end, and one allocate past
// its engine's memory bound (its own memory cap being far above it).
func TestHostileModules(t *testing.T) {
	for _, tc := range []struct {
		mode string
		says []string // one of them
		opts func(*escouade.Options)
	}{
		// A module's start is a turn too (the Go runtime's init, before
		// it first reads): on a loaded machine, under the race detector,
		// it takes more than the scripts' 200 ms.
		{mode: "spin", says: []string{"module interrupted: it ran past 2s"}, opts: func(o *escouade.Options) { o.ScriptTurn = 2 * time.Second }},
		// The runtime says it ran out of memory; built with the race
		// detector, the detector says it first.
		{mode: "grow", says: []string{"out of memory", "ThreadSanitizer failed to allocate", "address space collisions"}, opts: func(o *escouade.Options) {
			o.WASMMemoryPages = 65536 // 4 GiB: the engine's bound comes first
			o.ScriptTurn = time.Minute
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			o := hostileOptions()
			tc.opts(o)
			h, j := hookedHost(t, nil, newValidator(t), o)
			guard := startScript(t, h, "guard", guardJS)
			guardPid := enginePid(t, "guard")
			dir := writePlugin(t, "hostile", `"run":{"wasm":"plugin.wasm"},"permissions":{"events":["agent.created"]}`, nil)
			if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), wasmPlugin, 0o644); err != nil {
				t.Fatal(err)
			}
			hostile, err := h.Start(context.Background(), dir)
			if err != nil {
				t.Fatalf("%v; the journal holds:\n%s", err, j.dump())
			}
			for life := range 2 {
				waitFor(t, "the hostile plugin running", func() bool { return hostile.State() == escouade.StateRunning })
				pid := enginePid(t, "hostile")
				ended := len(j.find("hostile", "plugin ended unasked"))
				if _, err := h.Fact(context.Background(), "agent.created", map[string]any{"mode": tc.mode}, escouade.About{Project: "p"}); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the engine's end", func() bool { return len(j.find("hostile", "plugin ended unasked")) > ended })
				waitFor(t, "the engine's process gone", func() bool { return !procfs.Alive(pid) })
				if life == 0 {
					j.wait(t, "hostile", "plugin restarted")
				}
			}
			j.wait(t, "hostile", "plugin disabled: it crashed past its budget")
			said := false
			for _, s := range tc.says {
				said = said || len(j.find("hostile", s)) > 0
			}
			if !said {
				t.Errorf("the journal never said any of %q; it holds:\n%s", tc.says, j.dump())
			}
			if guard.State() != escouade.StateRunning || enginePid(t, "guard") != guardPid {
				t.Errorf("guard: state %s, pid %d then %d", guard.State(), guardPid, enginePid(t, "guard"))
			}
			if d := decide(t, h, "rm"); d.Verdict != protocol.Deny {
				t.Errorf("Decide(rm) = %+v", d)
			}
		})
	}
}

// TestHostileStartFiles has run.js and run.wasm name what is not a regular
// file: a FIFO (which would block open(2) for ever), a folder, a link out
// of the folder. Start fails at once with a reason.
func TestHostileStartFiles(t *testing.T) {
	h, _ := hookedHost(t, nil, nil, nil)
	for _, tc := range []struct{ name, run, file, kind string }{
		{"fifo-js", "js", "main.js", "fifo"},
		{"fifo-wasm", "wasm", "plugin.wasm", "fifo"},
		{"dir-js", "js", "main.js", "dir"},
		{"link-js", "js", "main.js", "link"},
	} {
		dir := writePlugin(t, tc.name, fmt.Sprintf(`"run":{%q:%q}`, tc.run, tc.file), nil)
		p := filepath.Join(dir, tc.file)
		var err error
		switch tc.kind {
		case "fifo":
			err = syscall.Mkfifo(p, 0o644)
		case "dir":
			err = os.Mkdir(p, 0o755)
		case "link":
			err = os.Symlink("/dev/zero", p)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Start(context.Background(), dir)
		if err == nil {
			t.Errorf("%s started", tc.name)
			continue
		}
		t.Logf("%s: %v", tc.name, err)
	}
	if len(h.Plugins()) != 0 {
		t.Errorf("plugins loaded: %v", h.Plugins())
	}
}

// TestHostileCompile has a script whose mere parsing recurses without end
// in goja's Go code: parsed in the engine's process, it ends that process,
// and Start fails with a reason, the Host and the other plugins untouched.
func TestHostileCompile(t *testing.T) {
	h, j := hookedHost(t, nil, newValidator(t), hostileOptions())
	guard := startScript(t, h, "guard", guardJS)
	deep := strings.Repeat("[", 2<<20) + strings.Repeat("]", 2<<20)
	dir := writePlugin(t, "deep", `"run":{"js":"main.js"}`, map[string]string{"main.js": deep})
	// The recursion ends at the stack's bound or at the memory's, which
	// ever comes first: the runtime's fatal error says which.
	if _, err := h.Start(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "fatal error: ") {
		t.Fatalf("Start = %v; the journal holds:\n%s", err, j.dump())
	}
	if guard.State() != escouade.StateRunning {
		t.Errorf("guard: state %s", guard.State())
	}
	if d := decide(t, h, "rm"); d.Verdict != protocol.Deny {
		t.Errorf("Decide(rm) = %+v", d)
	}
	if pids := enginePids("deep"); len(pids) > 0 {
		t.Errorf("engine processes left: %v", pids)
	}
}

// TestEngineNeedsOptIn checks that an isolated engine is never replaced by
// the in-process one behind the program's back, and that the in-process
// one is there when asked for.
func TestEngineNeedsOptIn(t *testing.T) {
	restore := escouade.SetEngineLinked(false)
	defer restore()
	h, _ := hookedHost(t, nil, nil, nil)
	dir := writePlugin(t, "js", `"run":{"js":"main.js"}`, map[string]string{"main.js": guardJS})
	if _, err := h.Start(context.Background(), dir); !errors.Is(err, escouade.ErrNoEngine) {
		t.Errorf("Start = %v, want ErrNoEngine", err)
	}
	in, _ := hookedHost(t, nil, newValidator(t), &escouade.Options{Engine: escouade.EngineInProcess})
	if _, err := in.Start(context.Background(), dir); err != nil {
		t.Errorf("Start in-process: %v", err)
	}
	if pids := enginePids("js"); len(pids) > 0 {
		t.Errorf("an engine process was started: %v", pids)
	}
}

// TestLanguageNeedsOptIn: a Host given no engine for a plugin's code
// starts none, in a process or in its own, and says which package to add;
// the other plugins are not touched.
func TestLanguageNeedsOptIn(t *testing.T) {
	for _, e := range []escouade.Engine{escouade.EngineIsolated, escouade.EngineInProcess} {
		h, _ := newHost(t, &escouade.Options{Engine: e, Languages: []escouade.Language{}})
		for kind, files := range map[string]map[string]string{
			"js":   {"main.js": guardJS},
			"wasm": {"main.wasm": "\x00asm"},
		} {
			run := `"run":{"` + kind + `":"main.` + kind + `"}`
			dir := writePlugin(t, "p-"+kind, run, files)
			_, err := h.Start(context.Background(), dir)
			if !errors.Is(err, escouade.ErrNoLanguage) || !strings.Contains(err.Error(), "shinken.dev/go/escouade/"+kind) {
				t.Errorf("%v, %s: Start = %v, want ErrNoLanguage naming the package", e, kind, err)
			}
		}
		if pids := enginePids("p-js"); len(pids) > 0 {
			t.Errorf("an engine process was started: %v", pids)
		}
	}
}

// startScript starts a run.js plugin id that decides, with source src.
func startScript(t *testing.T, h *escouade.Host, id, src string) *escouade.Plugin {
	t.Helper()
	dir := writePlugin(t, id, `"run":{"js":"main.js"},"permissions":{"decide":true}`, map[string]string{"main.js": src})
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func decide(t *testing.T, h *escouade.Host, kind string) protocol.Decision {
	t.Helper()
	d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r", Kind: kind}, escouade.About{Project: "p"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// enginePid returns the pid of the live engine process of plugin id, a
// child of this process.
func enginePid(t *testing.T, id string) int {
	t.Helper()
	var pids []int
	waitFor(t, "the engine process of "+id, func() bool {
		pids = enginePids(id)
		return len(pids) == 1
	})
	return pids[0]
}

// enginePids lists the live engine processes of plugin id that are
// children of this process.
func enginePids(id string) []int {
	var pids []int
	all, _ := procfs.PIDs()
	for _, pid := range all {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Equal(cmdline, []byte("escouade-engine\x00"+id+"\x00")) {
			continue
		}
		if procfs.Alive(pid) && parentOf(pid) == os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentOf returns the parent of pid, or 0.
func parentOf(pid int) int {
	st, _ := procfs.ReadStat(pid)
	return st.PPID
}
