package escouade_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/procfs"
)

// startCommand starts this test binary as the plugin id in mode, its lines
// recorded in a transcript that is checked against the schema at the end.
func startCommand(t *testing.T, h *escouade.Host, v *validator, id, fields, mode string, args ...string) *escouade.Plugin {
	t.Helper()
	dir := writePlugin(t, id, commandManifest(mode, args...)+fields, nil)
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withTranscript makes the plugins started from now on record their lines,
// and returns the function that checks them; it also runs at the test's
// end, once every plugin has stopped.
func withTranscript(t *testing.T, v *validator) (check func()) {
	dir := t.TempDir()
	control := filepath.Join(testTemp, transcriptFile)
	if err := os.WriteFile(control, []byte(dir), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(control) })
	var once sync.Once
	check = func() {
		once.Do(func() {
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			for _, f := range files {
				v.transcript(f)
			}
		})
	}
	t.Cleanup(check)
	return check
}

var rm = protocol.PermissionRequest{ID: "r", Kind: "command", Tool: "exec", Input: map[string]any{"command": "rm -rf /"}}

// neighbour checks that the good plugin still answers and hears facts.
func neighbour(t *testing.T, h *escouade.Host, j *journal) {
	t.Helper()
	ctx := context.Background()
	d, err := h.Decide(ctx, rm, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Deny || d.Plugin != "good" {
		t.Errorf("the good plugin's decision: %+v, %v", d, err)
	}
	seq, err := h.Fact(ctx, "agent.created", nil, escouade.About{})
	if err != nil {
		t.Fatal(err)
	}
	j.wait(t, "good", "fact agent.created "+strconv.FormatInt(seq, 10))
}

func projects() escouade.ProjectMap {
	return escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}}
}

func TestCommandPlugin(t *testing.T) {
	v := newValidator(t)
	check := withTranscript(t, v)
	h, j := newHost(t, &escouade.Options{Projects: projects()})
	p := startCommand(t, h, v, "good", `,"permissions":{"events":["agent.created"],"decide":true}`, "good")
	neighbour(t, h, j)
	d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r2", Kind: "command", Input: map[string]any{"command": "ls"}}, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Allow {
		t.Errorf("Decide(ls) = %+v, %v", d, err)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	j.wait(t, "good", "plugin stopped")
	if len(j.find("good", "SIGTERM")) != 0 {
		t.Errorf("a plugin that ends on shutdown was signalled:\n%s", j.dump())
	}
	check()
	v.need(t, "initialize", "events/fact", "permissions/decide", "shutdown")
}

// hostile starts a good plugin beside a hostile one, in a Host whose
// messages are all checked.
func hostile(t *testing.T, mode string, opts *escouade.Options) (*escouade.Host, *journal, *escouade.Plugin) {
	t.Helper()
	v := newValidator(t)
	withTranscript(t, v)
	o := escouade.Options{Projects: projects()}
	if opts != nil {
		o = *opts
		o.Projects = projects()
	}
	h, j := newHost(t, &o)
	startCommand(t, h, v, "good", `,"permissions":{"events":["agent.created"],"decide":true}`, "good")
	bad := startCommand(t, h, v, "bad", `,"permissions":{"events":["agent.created"],"decide":true}`, mode)
	return h, j, bad
}

func TestHostileGarbage(t *testing.T) {
	h, j, _ := hostile(t, "garbage", nil)
	j.wait(t, "bad", "not JSON")
	j.wait(t, "bad", "not JSON-RPC 2.0")
	j.wait(t, "bad", "not waiting") // the made-up response to id 99
	neighbour(t, h, j)
	// The garbage came before initialize: the plugin runs, and decides.
	d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r", Kind: "command", Input: map[string]any{"command": "ls"}}, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Allow {
		t.Errorf("Decide = %+v, %v", d, err)
	}
}

func TestHostileHugeLine(t *testing.T) {
	h, j, bad := hostile(t, "huge", nil)
	e := j.wait(t, "bad", "over the cap")
	if !strings.Contains(e.attrs["error"], "104857600 bytes") {
		t.Errorf("entry %v", e)
	}
	if bad.State() != escouade.StateRunning {
		t.Errorf("the plugin is %v after its huge line", bad.State())
	}
	neighbour(t, h, j)
}

func TestHostileSilent(t *testing.T) {
	h, j, bad := hostile(t, "silent", nil)
	start := time.Now()
	d, err := h.Decide(context.Background(), rm, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Deny || d.Plugin != "good" {
		t.Errorf("Decide = %+v, %v", d, err)
	}
	d, err = h.Decide(context.Background(), protocol.PermissionRequest{ID: "r3", Kind: "command", Input: map[string]any{"command": "ls"}}, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Ask {
		t.Errorf("Decide with a silent plugin = %+v, %v", d, err)
	}
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Errorf("the silent plugin was not waited for: %v", took)
	}
	j.wait(t, "bad", "no answer in time")
	neighbour(t, h, j)

	// It answers no shutdown and ignores its input's end and SIGTERM.
	if err := bad.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"did not answer shutdown", "did not end when its input closed: SIGTERM", "did not end on SIGTERM: SIGKILL", "plugin stopped"} {
		j.wait(t, "bad", step)
	}
}

func TestHostileTwice(t *testing.T) {
	h, j, _ := hostile(t, "twice", nil)
	d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r", Kind: "command", Input: map[string]any{"command": "ls"}}, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Allow || d.Plugin != "bad" || d.Message != "first" {
		t.Errorf("Decide = %+v, %v", d, err)
	}
	j.wait(t, "bad", "not waiting")
	neighbour(t, h, j)
}

func TestHostileStderrFlood(t *testing.T) {
	h, j, bad := hostile(t, "stderr", nil)
	j.wait(t, "bad", strings.Repeat("e", 100))
	j.wait(t, "bad", "journal entries dropped")
	for range 20 {
		neighbour(t, h, j)
	}
	if n := len(j.find("bad", strings.Repeat("e", 100))); n > 2000 {
		t.Errorf("%d stderr lines reached the journal: the rate cap does not hold", n)
	}
	if err := bad.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	j.wait(t, "bad", "plugin stopped")
}

func TestHostileExitMidRequest(t *testing.T) {
	h, j, bad := hostile(t, "exit", &escouade.Options{Backoff: 10 * time.Millisecond})
	start := time.Now()
	d, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r", Kind: "command", Input: map[string]any{"command": "ls"}}, escouade.About{Project: "p"})
	if err != nil || d.Verdict != protocol.Ask {
		t.Errorf("Decide = %+v, %v", d, err)
	}
	if took := time.Since(start); took > 400*time.Millisecond {
		t.Errorf("a plugin that died mid-request was waited for: %v", took)
	}
	j.wait(t, "bad", "ended unasked")
	j.wait(t, "bad", "plugin restarted")
	waitFor(t, "the plugin runs again", func() bool { return bad.State() == escouade.StateRunning })
	neighbour(t, h, j)
}

// pidIn reads the pid a plugin wrote to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, "the plugin writes a live process's pid in "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid = hostPID(string(b)) // a reference (pidRef)
		return pid > 0
	})
	return pid
}

func TestChildrenDieWithTheGroup(t *testing.T) {
	for _, how := range []string{"stop", "crash", "stop-shepherd", "crash-shepherd"} {
		t.Run(how, func(t *testing.T) {
			how, shepherd := strings.CutSuffix(how, "-shepherd")
			if shepherd {
				defer escouade.SetContainment("shepherd")()
			}
			v := newValidator(t)
			h, j := newHost(t, &escouade.Options{Projects: projects(), CrashBudget: 1})
			pidFile := filepath.Join(t.TempDir(), "pid")
			args := []string{pidFile}
			if how == "crash" {
				args = append(args, "crash")
			}
			p := startCommand(t, h, v, "kids", ``, "children", args...)
			child := pidIn(t, pidFile)
			if how == "stop" {
				waitFor(t, "the child has its own child", func() bool { return childOf(child) != 0 })
				if err := p.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
			} else {
				j.wait(t, "kids", "ended unasked")
			}
			waitFor(t, "the child dies with the group", func() bool { return !procfs.Alive(child) })
			if how == "crash" {
				p.Stop(context.Background())
			}
			// The grandchild, that ignored SIGTERM too, is gone as well.
			if pids := strayProcesses(); len(pids) != 0 {
				t.Errorf("processes outlived their plugin: %v", pids)
			}
		})
	}
}

func TestCommandProtocolVersion(t *testing.T) {
	h, j := newHost(t, nil)
	dir := writePlugin(t, "v2", commandManifest("version2"), nil)
	_, err := h.Start(context.Background(), dir)
	if !errors.Is(err, escouade.ErrProtocolVersion) {
		t.Fatalf("Start = %v", err)
	}
	e := j.wait(t, "v2", "another protocol version")
	if e.attrs["speaks"] != "2" {
		t.Errorf("entry %v", e)
	}
}

// TestParentDeathKillsPlugins runs a Host in a process of its own, kills
// that process, and checks that its plugin dies with it.
func TestParentDeathKillsPlugins(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	dir := writePlugin(t, "orphan", commandManifest("good"), nil)
	exe, _ := os.Executable()
	host := exec.Command(exe, pluginArg, "host", dir, pidFile)
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	pid := pidIn(t, pidFile)
	if !procfs.Alive(pid) {
		t.Fatal("the plugin is not running")
	}
	host.Process.Signal(syscall.SIGKILL)
	host.Wait()
	waitFor(t, "the plugin dies with its host", func() bool { return !procfs.Alive(pid) })
}
