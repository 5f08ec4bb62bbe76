package fence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testHost is a Host in memory: what a test gives it is what the fences
// are told.
type testHost struct {
	mu       sync.Mutex
	agents   map[string]*Agent
	projects map[string]*Project
	listable bool
	temp     string
	said     []string
}

func (h *testHost) Agent(key string) (*Agent, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, ok := h.agents[key]; ok {
		return a, nil
	}
	return nil, errorf(protocol.CodeRefused, "refused: no agent %q is attached to the plugin", key)
}

func (h *testHost) Project(_ context.Context, id string) (*Project, error) {
	if p, ok := h.projects[id]; ok {
		return p, nil
	}
	return nil, errors.New("no such project")
}

func (h *testHost) Projects(context.Context) ([]*Project, bool, error) {
	if !h.listable {
		return nil, false, nil
	}
	var out []*Project
	for _, p := range h.projects {
		out = append(out, p)
	}
	return out, true, nil
}

func (h *testHost) Accounts(context.Context) ([]string, error) { return nil, nil }
func (h *testHost) TempDir() (string, error)                   { return h.temp, nil }
func (h *testHost) PluginDirs() []string                       { return nil }
func (h *testHost) SharedPort() (string, bool)                 { return "", false }
func (h *testHost) Say(_ slog.Level, msg string, _ ...slog.Attr) {
	h.mu.Lock()
	h.said = append(h.said, msg)
	h.mu.Unlock()
}
func (h *testHost) Limited(level slog.Level, msg string, attrs ...slog.Attr) {
	h.Say(level, msg, attrs...)
}

// A note is a notification the fences sent, its params encoded.
type note struct {
	method string
	params string
}

// notes hands the notifications to the test, in order.
type notes chan note

func (n notes) Notify(method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	n <- note{method, string(b)}
	return nil
}

// answered is a Call whose answer has always reached the plugin.
type answered struct{}

func (answered) AfterAnswer() func(context.Context) { return func(context.Context) {} }

// heldAnswer is a Call whose answer reaches the plugin when the test lets
// it: what a method sends after its answer says on waiting that it waits.
type heldAnswer struct {
	waiting chan struct{}
	release chan struct{}
}

func newHeldAnswer() heldAnswer {
	return heldAnswer{waiting: make(chan struct{}, 1), release: make(chan struct{})}
}

func (h heldAnswer) AfterAnswer() func(context.Context) {
	return func(ctx context.Context) {
		h.waiting <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	}
}

// start returns an instance of a plugin configured by cfg, closed at the
// end of the test.
func start(t *testing.T, cfg Config, h *testHost) (*Instance, notes) {
	t.Helper()
	if h.temp == "" {
		h.temp = t.TempDir()
	}
	p := New(cfg, h)
	n := make(notes, 16)
	in := p.NewInstance(n, nil)
	t.Cleanup(func() {
		in.Close()
		p.Close()
	})
	return in, n
}

// serve calls method with params, as the Host's dispatch does.
func serve(t *testing.T, in *Instance, method, params string) (any, error) {
	t.Helper()
	m, ok := Lookup(method)
	if !ok {
		t.Fatalf("Lookup(%q): not a fence", method)
	}
	return m(context.Background(), in, answered{}, []byte(params))
}

// code returns the protocol's code of err: invalidParams for a field
// that does not hold; 0 for no error.
func code(err error) protocol.Code {
	var e *protocol.Error
	var fe *protocol.FieldError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.Code
	case errors.As(err, &fe):
		return protocol.CodeInvalidParams
	}
	return -1
}

func TestLookup(t *testing.T) {
	for _, m := range []string{"timer/set", "fs/read", "proc/spawn", "net/fetch", "net/stream", "ws/open"} {
		if _, ok := Lookup(m); !ok {
			t.Errorf("Lookup(%q) found nothing", m)
		}
		if ms, known := protocol.LookupMethod(m); !known || ms.ToPlugin {
			t.Errorf("%s is not a method the protocol has plugins call", m)
		}
	}
	for _, m := range []string{"secrets/get", "log", "initialize", "fs/nothing"} {
		if _, ok := Lookup(m); ok {
			t.Errorf("Lookup(%q) found a fence", m)
		}
	}
}

// TestTimerAfterAnswer: a timer comes due after its answer reached the
// plugin, however late the answer and short the timer (the plugin knows
// the timer by the id the answer gives it), and one whose instance ends
// while it waits for its answer never comes due.
func TestTimerAfterAnswer(t *testing.T) {
	in, n := start(t, Config{}, &testHost{})
	m, _ := Lookup("timer/set")
	held := newHeldAnswer()
	res, err := m(context.Background(), in, held, []byte(`{"ms":1}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-n:
		t.Fatalf("%+v before the answer reached the plugin", got)
	case <-held.waiting: // it came due, and waits for its answer
	}
	select {
	case got := <-n:
		t.Fatalf("%+v before the answer reached the plugin", got)
	default:
	}
	close(held.release)
	want := note{"timer/fired", fmt.Sprintf(`{"timer":%d}`, res.(timerSetResult).Timer)}
	if got := <-n; got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}

	held = newHeldAnswer()
	if _, err := m(context.Background(), in, held, []byte(`{"ms":1}`)); err != nil {
		t.Fatal(err)
	}
	<-held.waiting
	in.Close()
	if len(n) != 0 {
		t.Errorf("a timer of an instance that ended came due: %+v", <-n)
	}
}

// TestTimer: a timer comes due once, with the id it was given; one taken
// back or left when the instance ends never does.
func TestTimer(t *testing.T) {
	in, n := start(t, Config{}, &testHost{})
	res, err := serve(t, in, "timer/set", `{"ms":1}`)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(timerSetResult).Timer
	if got := <-n; got.method != "timer/fired" || got.params != `{"timer":1}` || id != 1 {
		t.Errorf("timer %d: %+v", id, got)
	}
	for _, tt := range []struct{ name, params string }{
		{"no ms", `{}`},
		{"ms a string", `{"ms":"10"}`},
		{"ms past a year", `{"ms":1e12}`},
		{"ms given twice", `{"ms":10,"ms":20}`},
	} {
		if _, err := serve(t, in, "timer/set", tt.params); code(err) != protocol.CodeInvalidParams {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	long, _ := serve(t, in, "timer/set", `{"ms":3600000}`)
	if _, err := serve(t, in, "timer/cancel", `{"timer":2}`); err != nil || long.(timerSetResult).Timer != 2 {
		t.Fatalf("timer/cancel: %v", err)
	}
	if _, err := serve(t, in, "timer/set", `{"ms":3600000}`); err != nil {
		t.Fatal(err)
	}
	in.Close()
	in.mu.Lock()
	left := len(in.timers)
	in.mu.Unlock()
	if left != 0 {
		t.Errorf("%d timers left once the instance ended", left)
	}
	if _, err := serve(t, in, "timer/set", `{"ms":10}`); code(err) != protocol.CodeRefused {
		t.Errorf("a timer set once the instance ended: %v", err)
	}
	if len(n) != 0 {
		t.Errorf("a timer taken back came due: %+v", <-n)
	}
}

// TestFiles: fs/* reach the roots the Config declares, as declared, and
// the Host's answers (an agent attached or not, a private project) hold.
func TestFiles(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("hé"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &testHost{
		agents: map[string]*Agent{
			"ada": {Key: "ada", Roots: AgentRoots{Home: home}},
			"bob": {Key: "bob", Project: "secret", Roots: AgentRoots{Home: home}},
		},
		projects: map[string]*Project{"secret": {Private: true}},
	}
	in, _ := start(t, Config{Files: map[string]manifest.Access{"temp": manifest.AccessWrite, "agentHome": manifest.AccessRead}}, h)

	res, err := serve(t, in, "fs/write", `{"root":"temp","path":"a/b.txt","text":"un"}`)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(h.temp)
	if w := res.(fsWriteResult); w.Bytes != 2 || w.Path != filepath.Join(real, "a", "b.txt") {
		t.Errorf("fs/write: %+v", w)
	}
	if res, err := serve(t, in, "fs/read", `{"root":"temp","path":"a/b.txt"}`); err != nil || *res.(fsReadResult).Text != "un" {
		t.Errorf("fs/read: %v, %v", res, err)
	}
	if res, err := serve(t, in, "fs/read", `{"agent":"ada","root":"agentHome","path":"notes.txt"}`); err != nil || *res.(fsReadResult).Text != "hé" {
		t.Errorf("fs/read of the agent's home: %v, %v", res, err)
	}
	res, err = serve(t, in, "fs/list", `{"root":"temp","path":"."}`)
	if err != nil {
		t.Fatal(err)
	}
	if l := res.(fsListResult); len(l.Entries) != 1 || l.Entries[0] != (fsEntry{Name: "a", Kind: "dir"}) || l.Truncated {
		t.Errorf("fs/list: %+v", l)
	}
	for _, tt := range []struct {
		name, method, params string
		want                 protocol.Code
	}{
		{"a root declared read, written", "fs/write", `{"agent":"ada","root":"agentHome","path":"x","text":"x"}`, protocol.CodeRefused},
		{"a root not declared", "fs/read", `{"root":"plugin","path":"x"}`, protocol.CodeRefused},
		{"an agent's root, no agent", "fs/read", `{"root":"agentHome","path":"notes.txt"}`, protocol.CodeInvalidParams},
		{"an agent not attached", "fs/read", `{"agent":"eve","root":"agentHome","path":"notes.txt"}`, protocol.CodeRefused},
		{"a private project's agent", "fs/read", `{"agent":"bob","root":"agentHome","path":"notes.txt"}`, protocol.CodeRefused},
		{"a hidden file", "fs/write", `{"root":"temp","path":".env","text":"x"}`, protocol.CodeRefused},
		{"a way out", "fs/read", `{"root":"temp","path":"../x"}`, protocol.CodeRefused},
		{"a manifest", "fs/write", `{"root":"temp","path":"plugin.json","text":"{}"}`, protocol.CodeRefused},
		{"a file that is not there", "fs/read", `{"root":"temp","path":"none.txt"}`, protocol.CodeNotFound},
		{"text and dataBase64", "fs/write", `{"root":"temp","path":"t","text":"a","dataBase64":"YQ=="}`, protocol.CodeInvalidParams},
		{"no path", "fs/stat", `{"root":"temp"}`, protocol.CodeInvalidParams},
	} {
		if _, err := serve(t, in, tt.method, tt.params); code(err) != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	h.mu.Lock()
	said := slices.Clone(h.said)
	h.mu.Unlock()
	if !slices.Contains(said, "fs/write") {
		t.Errorf("the write was not journaled: %q", said)
	}
}

// TestPrivateFolder: with projects that can be listed, a private
// project's folder is refused wherever a path reaches it from, and left
// out of a listing.
func TestPrivateFolder(t *testing.T) {
	home := t.TempDir()
	private := filepath.Join(home, "work")
	if err := os.MkdirAll(private, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(private, "plan.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &testHost{
		agents:   map[string]*Agent{"ada": {Key: "ada", Roots: AgentRoots{Home: home}}},
		projects: map[string]*Project{"work": {Root: private, Private: true}},
		listable: true,
	}
	in, _ := start(t, Config{Files: map[string]manifest.Access{"agentHome": manifest.AccessRead}}, h)
	if _, err := serve(t, in, "fs/read", `{"agent":"ada","root":"agentHome","path":"work/plan.txt"}`); code(err) != protocol.CodeRefused ||
		!strings.Contains(err.Error(), "private project") {
		t.Errorf("a private project's file: %v", err)
	}
	res, err := serve(t, in, "fs/list", `{"agent":"ada","root":"agentHome","path":"."}`)
	if err != nil || len(res.(fsListResult).Entries) != 0 {
		t.Errorf("a listing shows the private project: %+v, %v", res, err)
	}
	h.projects["work"].On = true
	if _, err := serve(t, in, "fs/read", `{"agent":"ada","root":"agentHome","path":"work/plan.txt"}`); err != nil {
		t.Errorf("a private project the plugin is on for: %v", err)
	}
}

func TestCommandAllowed(t *testing.T) {
	entries := []string{"git status", "git log *", "ls"}
	for _, tt := range []struct {
		words []string
		want  bool
	}{
		{[]string{"git", "status"}, true},
		{[]string{"git", "status", "-s"}, false},
		{[]string{"git", "log"}, true},
		{[]string{"git", "log", "--oneline", "-3"}, true},
		{[]string{"git"}, false},
		{[]string{"ls"}, true},
		{[]string{"ls", "-la"}, false},
		{[]string{"rm", "-rf", "/"}, false},
	} {
		if got := commandAllowed(entries, tt.words); got != tt.want {
			t.Errorf("commandAllowed(%q) = %v", tt.words, got)
		}
	}
}

func TestProgramEnv(t *testing.T) {
	got := programEnv([]string{"PATH=/bin", "ESCOUADE_TOKEN=x", "escouade_other=y", "LANG=C", "HOME=/h"}, map[string]string{"LANG": "fr_FR.UTF-8", "TZ": "UTC"})
	want := []string{"PATH=/bin", "HOME=/h", "LANG=fr_FR.UTF-8", "TZ=UTC"}
	if !slices.Equal(got, want) {
		t.Errorf("programEnv = %q, want %q", got, want)
	}
}

func TestUTF8Cut(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 2},
		{"a\xc3", 1},         // the first byte of é
		{"a\xe2\x82", 1},     // two of €'s three
		{"a\xf0\x9f\x98", 1}, // three of 😀's four
		{"a\xe2\x82\xac", 4}, // € whole
		{"a\x80", 2},         // no character starts there: nothing to wait for
	} {
		if got := utf8Cut([]byte(tt.in)); got != tt.want {
			t.Errorf("utf8Cut(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestProcAfterAnswer: what a program wrote, and its end, come after the
// answer that names it reached the plugin, however fast the program.
func TestProcAfterAnswer(t *testing.T) {
	in, n := start(t, Config{Commands: []string{"echo *"}, StopGrace: time.Minute}, &testHost{})
	m, _ := Lookup("proc/spawn")
	held := newHeldAnswer()
	res, err := m(context.Background(), in, held, []byte(`{"command":"echo","args":["vite"]}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-n:
		t.Fatalf("%+v before the answer reached the plugin", got)
	case <-held.waiting: // the program runs, and its output waits for the answer
	}
	close(held.release)
	id := res.(procSpawnResult).Proc
	want := []note{
		{"proc/out", fmt.Sprintf(`{"proc":%d,"stream":"stdout","data":"vite\n"}`, id)},
		{"proc/exit", fmt.Sprintf(`{"proc":%d,"code":0}`, id)},
	}
	for _, w := range want {
		if got := <-n; got != w {
			t.Errorf("got %+v, want %+v", got, w)
		}
	}
}

// TestProc: a program of permissions.commands runs in the plugin's
// temporary folder, its output and then its end told in order; what the
// permissions do not name is refused before anything runs.
func TestProc(t *testing.T) {
	in, n := start(t, Config{Commands: []string{"echo *", "pwd"}, StopGrace: time.Minute}, &testHost{})
	res, err := serve(t, in, "proc/spawn", `{"command":"echo","args":["un","deux"],"env":{"LANG":"C"}}`)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(procSpawnResult).Proc
	var out strings.Builder
	for got := range n {
		if got.method == "proc/exit" {
			if got.params != fmt.Sprintf(`{"proc":%d,"code":0}`, id) {
				t.Errorf("proc/exit: %s", got.params)
			}
			break
		}
		var p struct {
			Proc   int64
			Stream string
			Data   string
		}
		if err := json.Unmarshal([]byte(got.params), &p); err != nil || got.method != "proc/out" || p.Proc != id || p.Stream != "stdout" {
			t.Fatalf("%s %s: %v", got.method, got.params, err)
		}
		out.WriteString(p.Data)
	}
	if out.String() != "un deux\n" {
		t.Errorf("stdout %q", out.String())
	}
	for _, tt := range []struct {
		name, params string
		want         protocol.Code
	}{
		{"words not an entry", `{"command":"pwd","args":["-P"]}`, protocol.CodeRefused},
		{"a program not named", `{"command":"rm","args":["x"]}`, protocol.CodeRefused},
		{"a path", `{"command":"/bin/echo"}`, protocol.CodeRefused},
		{"a variable not permitted", `{"command":"echo","env":{"GIT_DIR":"x"}}`, protocol.CodeRefused},
		{"a variable never set", `{"command":"echo","env":{"LD_PRELOAD":"x"}}`, protocol.CodeRefused},
		{"a locale that is a path", `{"command":"echo","env":{"LANGUAGE":"../x"}}`, protocol.CodeRefused},
		{"dir agent, no agent", `{"command":"pwd","dir":"agent"}`, protocol.CodeInvalidParams},
		{"an agent not attached", `{"command":"pwd","agent":"eve"}`, protocol.CodeRefused},
		{"a NUL", `{"command":"echo","args":["a\u0000b"]}`, protocol.CodeInvalidParams},
		{"no command", `{"args":["x"]}`, protocol.CodeInvalidParams},
	} {
		if _, err := serve(t, in, "proc/spawn", tt.params); code(err) != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := serve(t, in, "proc/kill", fmt.Sprintf(`{"proc":%d}`, id)); code(err) != protocol.CodeFailed {
		t.Errorf("proc/kill of a program that ended: %v", err)
	}
}
