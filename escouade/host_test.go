package escouade_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

// connect starts hs in-process in h as the plugin id with the manifest's
// extra fields, every line checked by v.
func connect(t *testing.T, h *escouade.Host, v *validator, id, fields, dir string, hs plugin.Handlers) *escouade.Plugin {
	t.Helper()
	p, err := h.StartFunc(context.Background(), parseManifest(t, id, fields), dir, v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
		return plugin.Serve(ctx, in, out, hs)
	}))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// factSink collects the facts a plugin receives.
type factSink struct {
	mu    sync.Mutex
	facts []protocol.Fact
	got   chan struct{}
}

func newSink() *factSink { return &factSink{got: make(chan struct{}, 100)} }

func (s *factSink) handlers() plugin.Handlers {
	return plugin.Handlers{Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) {
		s.mu.Lock()
		s.facts = append(s.facts, f)
		s.mu.Unlock()
		s.got <- struct{}{}
	}}
}

func (s *factSink) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, f := range s.facts {
		p := "-"
		if f.Project != nil {
			p = f.Project.ID
		}
		out = append(out, f.Name+"@"+p)
	}
	return out
}

func TestFactsGoOnlyWhereAllowed(t *testing.T) {
	v := newValidator(t)
	h, _ := newHost(t, &escouade.Options{Projects: escouade.ProjectMap{
		"pub":  {Project: protocol.Project{ID: "pub", Name: "Public"}, Plugins: map[string]bool{"b": false}},
		"priv": {Project: protocol.Project{ID: "priv", Name: "Secret", Private: true}, Plugins: map[string]bool{"a": true}},
	}})
	a, b, c := newSink(), newSink(), newSink()
	connect(t, h, v, "a", `,"permissions":{"events":["agent.created"]}`, "", a.handlers())
	connect(t, h, v, "b", `,"permissions":{"events":["agent.created","ticket.column"]}`, "", b.handlers())
	connect(t, h, v, "c", ``, "", c.handlers())
	ctx := context.Background()
	var seqs []int64
	for _, f := range []struct{ name, project string }{
		{"agent.created", "pub"},  // a; b is off there
		{"agent.created", "priv"}, // a, turned on for it; b is not
		{"ticket.column", ""},     // b
		{"ticket.column", "pub"},  // nobody: b is off there
		{"agent.created", ""},     // a and b
	} {
		seq, err := h.Fact(ctx, f.name, map[string]string{"k": "v"}, escouade.About{Project: f.project})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Errorf("seq not monotonic: %v", seqs)
		}
	}
	for range 3 {
		<-a.got
	}
	for range 2 {
		<-b.got
	}
	// One more fact to each, as a barrier: what came before has arrived.
	h.Fact(ctx, "agent.created", nil, escouade.About{Project: "pub"})
	<-a.got
	if got, want := strings.Join(a.names(), " "), "agent.created@pub agent.created@priv agent.created@- agent.created@pub"; got != want {
		t.Errorf("a got %s, want %s", got, want)
	}
	if got, want := strings.Join(b.names(), " "), "ticket.column@- agent.created@-"; got != want {
		t.Errorf("b got %s, want %s", got, want)
	}
	if len(c.names()) != 0 {
		t.Errorf("c, which lists no fact, got %v", c.names())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, f := range a.facts {
		if i > 0 && f.Seq <= a.facts[i-1].Seq {
			t.Errorf("facts out of order: %d after %d", f.Seq, a.facts[i-1].Seq)
		}
		if _, err := f.Time(); err != nil {
			t.Errorf("at %q is not RFC 3339: %v", f.At, err)
		}
		if f.Version != 1 || string(f.Data) == "" {
			t.Errorf("fact %+v", f)
		}
	}
	if p := a.facts[1].Project; p == nil || !p.Private || p.Name != "Secret" {
		t.Errorf("the private project, as sent: %+v", p)
	}
}

func TestFactRefusals(t *testing.T) {
	h, _ := newHost(t, nil)
	ctx := context.Background()
	if _, err := h.Fact(ctx, "agent.exploded", nil, escouade.About{}); !errors.Is(err, escouade.ErrUnknownFact) {
		t.Errorf("unknown fact: %v", err)
	}
	if _, err := h.Fact(ctx, "agent.created", nil, escouade.About{Project: "nope"}); !errors.Is(err, escouade.ErrNoProject) {
		t.Errorf("unknown project: %v", err)
	}
	if _, err := h.Fact(ctx, "agent.created", []int{1}, escouade.About{}); err == nil {
		t.Error("data that is not an object was published")
	}
	if _, err := h.Fact(ctx, "agent.created", json.RawMessage(`{"a":1,"a":2}`), escouade.About{}); err == nil {
		t.Error("data with a duplicate key was published")
	}
}

// decider answers permissions/decide with d, after delay.
func decider(d protocol.Decision, delay time.Duration) plugin.Handlers {
	return plugin.Handlers{Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return protocol.Decision{}, ctx.Err()
			}
		}
		return d, nil
	}}
}

func TestDecideCombines(t *testing.T) {
	allow := decider(protocol.Decision{Verdict: protocol.Allow, Message: "fine"}, 0)
	deny := decider(protocol.Decision{Verdict: protocol.Deny, Message: "no rm"}, 0)
	ask := decider(protocol.Decision{Verdict: protocol.Ask, Message: "ask them"}, 0)
	slow := decider(protocol.Decision{Verdict: protocol.Allow}, time.Minute)
	type pl struct {
		id string
		hs plugin.Handlers
	}
	tests := []struct {
		name    string
		plugins []pl
		want    protocol.Decision
		quick   bool // before the 500 ms timeout
	}{
		{"nobody to ask", nil, protocol.Decision{Verdict: protocol.Ask}, true},
		{"allow", []pl{{"a", allow}}, protocol.Decision{Verdict: protocol.Allow, Message: "fine", Plugin: "a"}, true},
		{"deny wins", []pl{{"a", allow}, {"b", deny}, {"c", ask}}, protocol.Decision{Verdict: protocol.Deny, Message: "no rm", Plugin: "b"}, true},
		{"ask over allow", []pl{{"a", allow}, {"c", ask}}, protocol.Decision{Verdict: protocol.Ask, Message: "ask them", Plugin: "c"}, true},
		{"silence is ask", []pl{{"a", allow}, {"s", slow}}, protocol.Decision{Verdict: protocol.Ask}, false},
		{"deny does not wait for silence", []pl{{"b", deny}, {"s", slow}}, protocol.Decision{Verdict: protocol.Deny, Message: "no rm", Plugin: "b"}, true},
		{"not on for the project", []pl{{"off", deny}, {"a", allow}}, protocol.Decision{Verdict: protocol.Allow, Message: "fine", Plugin: "a"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newValidator(t)
			h, j := newHost(t, &escouade.Options{Projects: escouade.ProjectMap{
				"p": {Project: protocol.Project{ID: "p", Name: "P"}, Plugins: map[string]bool{"off": false}},
			}})
			for _, p := range tt.plugins {
				connect(t, h, v, p.id, `,"permissions":{"decide":true}`, "", p.hs)
			}
			connect(t, h, v, "bystander", ``, "", deny) // has no permissions.decide: never asked
			start := time.Now()
			got, err := h.Decide(context.Background(), protocol.PermissionRequest{ID: "r1", Kind: "command", Tool: "exec", Input: map[string]any{"argv": []string{"ls"}}}, escouade.About{Project: "p"})
			took := time.Since(start)
			if err != nil || got != tt.want {
				t.Fatalf("Decide = %+v, %v; want %+v", got, err, tt.want)
			}
			if tt.quick && took > 400*time.Millisecond {
				t.Errorf("took %v", took)
			}
			if !tt.quick {
				if took < 450*time.Millisecond {
					t.Errorf("a silent plugin was not waited for: %v", took)
				}
				// The silent plugin's own handler times out at the same
				// 500 ms: whichever comes first, the silence counts as ask.
				j.wait(t, "s", "counted as ask")
			}
		})
	}
}

func TestDecideRefusals(t *testing.T) {
	h, _ := newHost(t, nil)
	ctx := context.Background()
	req := protocol.PermissionRequest{ID: "r", Kind: "command"}
	if _, err := h.Decide(ctx, req, escouade.About{}); !errors.Is(err, escouade.ErrNoProject) {
		t.Errorf("no project: %v", err)
	}
	if _, err := h.Decide(ctx, req, escouade.About{Project: "nope"}); !errors.Is(err, escouade.ErrNoProject) {
		t.Errorf("unknown project: %v", err)
	}
	if _, err := h.Decide(ctx, protocol.PermissionRequest{Kind: "command"}, escouade.About{Project: "nope"}); err == nil {
		t.Error("a request without an id was asked")
	}
}

// capture returns handlers that hand over the plugin's Conn.
func capture() (plugin.Handlers, <-chan *plugin.Conn) {
	ch := make(chan *plugin.Conn, 1)
	return plugin.Handlers{Initialize: func(ctx context.Context, c *plugin.Conn, p protocol.InitializeParams) (map[string]any, error) {
		ch <- c
		return nil, nil
	}}, ch
}

func TestSettings(t *testing.T) {
	v := newValidator(t)
	rootOn, rootOff, rootBad := t.TempDir(), t.TempDir(), t.TempDir()
	yml := "other: {x: 1}\nplugins:\n  s:\n    color: blue\n    size: 12\n    dark: yes\n    ghost: 1\n  t:\n    color: red\n"
	os.WriteFile(filepath.Join(rootOn, ".escouade.yml"), []byte(yml), 0o644)
	os.WriteFile(filepath.Join(rootOff, ".escouade.yml"), []byte(yml), 0o644)
	os.WriteFile(filepath.Join(rootBad, ".escouade.yml"), []byte("plugins:\n  s: {a: 1, a: 2}\n"), 0o644)
	h, j := newHost(t, &escouade.Options{
		Settings: &escouade.FileSettings{User: map[string]map[string]any{"s": {"size": 10, "dark": false}}},
		Projects: escouade.ProjectMap{
			"on":   {Project: protocol.Project{ID: "on", Name: "On"}, Root: rootOn},
			"off":  {Project: protocol.Project{ID: "off", Name: "Off"}, Root: rootOff, Plugins: map[string]bool{"s": false}},
			"priv": {Project: protocol.Project{ID: "priv", Name: "Priv", Private: true}, Root: rootOn},
			"bad":  {Project: protocol.Project{ID: "bad", Name: "Bad"}, Root: rootBad},
		},
	})
	hs, conns := capture()
	connect(t, h, v, "s", `,"contributes":{"settings":{
		"color":{"type":"string","default":"green","description":"Its colour."},
		"size":{"type":"number","default":1},
		"dark":{"type":"boolean"},
		"none":{"type":"string"}}}`, "", hs)
	c := <-conns
	ctx := context.Background()
	tests := []struct {
		project string
		want    string
	}{
		{"", `{"color":"green","dark":false,"size":10}`},
		{"on", `{"color":"blue","dark":false,"size":12}`}, // dark: yes is a string in YAML 1.2: ignored
		{"off", `{"color":"green","dark":false,"size":10}`},
		{"priv", `{"color":"green","dark":false,"size":10}`},
		{"nope", `{"color":"green","dark":false,"size":10}`},
	}
	for _, tt := range tests {
		got, err := c.Settings(ctx, tt.project)
		b, _ := json.Marshal(got)
		if err != nil || string(b) != tt.want {
			t.Errorf("Settings(%q) = %s, %v; want %s", tt.project, b, err, tt.want)
		}
	}
	if _, err := c.Settings(ctx, "bad"); !errors.Is(err, protocol.ErrFailed) {
		t.Errorf("a broken .escouade.yml: %v", err)
	}
	j.wait(t, "s", "wrong type")
	j.wait(t, "s", "does not declare")
}

func TestFilesRead(t *testing.T) {
	v := newValidator(t)
	h, _ := newHost(t, nil)
	dir := writePlugin(t, "f", `"run":{"command":["x"]}`, map[string]string{
		"rules.json":       "rules",
		"data/words.txt":   "mot é",
		".env":             "SECRET=1",
		".git/config":      "x",
		"data/.hidden":     "x",
		"latin1.txt":       "caf\xe9",
		"big.txt":          strings.Repeat("a", 256<<10+1),
		"max.txt":          strings.Repeat("a", 256<<10),
		"data/sub/a.txt":   "deep",
		"data/plugin.json": "not the manifest",
	})
	outside := filepath.Join(t.TempDir(), "outside.txt")
	os.WriteFile(outside, []byte("outside"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "abs-link"))
	os.Symlink("../../"+filepath.Base(filepath.Dir(outside))+"/outside.txt", filepath.Join(dir, "rel-link"))
	os.Symlink(".env", filepath.Join(dir, "env-link"))
	os.Symlink("plugin.json", filepath.Join(dir, "manifest-link"))
	os.Symlink("data/words.txt", filepath.Join(dir, "words-link"))
	os.Symlink("data", filepath.Join(dir, "data-link"))
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	hs, conns := capture()
	p, err := h.StartFunc(context.Background(), parseManifest(t, "f", ""), dir, v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
		return plugin.Serve(ctx, in, out, hs)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	c := <-conns
	tests := []struct {
		path string
		want string // the text, or the error's code name
	}{
		{"rules.json", "rules"},
		{"data/words.txt", "mot é"},
		{"data/sub/a.txt", "deep"},
		{"words-link", "mot é"},
		{"data-link/words.txt", "mot é"},
		{"data/plugin.json", "not the manifest"},
		{"max.txt", strings.Repeat("a", 256<<10)},
		{"/etc/passwd", "refused"},
		{"../f/rules.json", "refused"},
		{"data/../rules.json", "refused"},
		{"./rules.json", "refused"},
		{"data//words.txt", "refused"},
		{`data\words.txt`, "refused"},
		{"", "refused"},
		{".env", "refused"},
		{".git/config", "refused"},
		{"data/.hidden", "refused"},
		{"plugin.json", "refused"},
		{"Plugin.JSON", "refused"},
		{"abs-link", "refused"},
		{"rel-link", "refused"},
		{"env-link", "refused"},
		{"manifest-link", "refused"},
		{"nope.txt", "notFound"},
		{"data", "notFound"},
		{"rules.json/x", "notFound"},
		{"dangling", "notFound"},
		{"latin1.txt", "failed"},
		{"big.txt", "failed"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		got, err := c.ReadFile(ctx, tt.path)
		var e *protocol.Error
		switch {
		case errors.As(err, &e):
			if e.Code.String() != tt.want {
				t.Errorf("ReadFile(%q) = %v, want %s", tt.path, err, tt.want)
			}
		case err != nil:
			t.Errorf("ReadFile(%q) = %v", tt.path, err)
		case got != tt.want:
			t.Errorf("ReadFile(%q) = %.20q, want %.20q", tt.path, got, tt.want)
		}
	}
}

func TestLogGoesToTheJournal(t *testing.T) {
	v := newValidator(t)
	h, j := newHost(t, nil)
	hs, conns := capture()
	connect(t, h, v, "l", ``, "", hs)
	c := <-conns
	c.Log(slog.LevelWarn, "careful")
	c.Logger().With("n", 1).WithGroup("g").Info("hello", "k", "v")
	e := j.wait(t, "l", "careful")
	if e.level != slog.LevelWarn || e.attrs["stream"] != "log" {
		t.Errorf("entry %v", e)
	}
	if e := j.wait(t, "l", "hello"); e.msg != "hello n=1 g.k=v" || e.level != slog.LevelInfo {
		t.Errorf("entry %v", e)
	}
	c.Notify("log", map[string]string{"level": "loud", "message": "x"})
	j.wait(t, "l", "request failed")
}

func TestCommandPluginMethodsNotFound(t *testing.T) {
	v := newValidator(t)
	h, _ := newHost(t, nil)
	hs, conns := capture()
	connect(t, h, v, "m", ``, "", hs)
	c := <-conns
	for _, m := range []string{"net/fetch", "net/stream", "ws/open", "ws/send", "timer/set", "fs/read", "fs/write", "proc/spawn", "proc/kill", "permissions/decide", "events/fact", "no/such"} {
		err := c.Call(context.Background(), m, map[string]any{}, nil)
		if !errors.Is(err, protocol.ErrMethodNotFound) {
			t.Errorf("%s: %v, want methodNotFound", m, err)
		}
	}
}

// crasher is a plugin whose first life ends on a ticket.report fact, and
// whose later lives end at once when die is set.
type crasher struct {
	lives    atomic.Int32
	die      atomic.Bool
	attached chan protocol.AttachParams
}

func (cr *crasher) run(ctx context.Context, in io.Reader, out io.Writer) error {
	life := cr.lives.Add(1)
	if life > 1 && cr.die.Load() {
		return errors.New("crashed at start")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := plugin.Serve(ctx, in, out, plugin.Handlers{
		Initialize: func(context.Context, *plugin.Conn, protocol.InitializeParams) (map[string]any, error) {
			return map[string]any{"batch": true}, nil // the agents come back in one batch
		},
		Fact: func(_ context.Context, c *plugin.Conn, f protocol.Fact) {
			if f.Name == "ticket.report" {
				cancel()
			}
		},
		Attach: func(ctx context.Context, c *plugin.Conn, a protocol.AttachParams) { cr.attached <- a },
	})
	return err
}

func TestRestartGivesAttachedAgentsAgain(t *testing.T) {
	h, j := newHost(t, &escouade.Options{Agents: escouade.AgentMap{
		"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Key: "k1"},
		"k2": {Agent: protocol.Agent{ID: "a2", Name: "Bob"}, Key: "k2"},
	}})
	v := newValidator(t)
	cr := &crasher{attached: make(chan protocol.AttachParams, 8)}
	ctx := context.Background()
	p, err := h.StartFunc(ctx, parseManifest(t, "cr", `,"permissions":{"events":["ticket.report"]}`), "", v.wrap(cr.run))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Attach(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if err := p.Attach(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	if err := p.Attach(ctx, "nobody"); !errors.Is(err, escouade.ErrNoAgent) {
		t.Errorf("an unknown agent: %v", err)
	}
	<-cr.attached
	<-cr.attached
	h.Fact(ctx, "ticket.report", nil, escouade.About{})
	j.wait(t, "cr", "ended unasked")
	j.wait(t, "cr", "plugin restarted")
	got := []string{(<-cr.attached).Key, (<-cr.attached).Key}
	if strings.Join(got, ",") != "k1,k2" {
		t.Errorf("after the restart the plugin was given %v", got)
	}
	if p.State() != escouade.StateRunning || cr.lives.Load() != 2 {
		t.Errorf("state %v after %d lives", p.State(), cr.lives.Load())
	}
	v.need(t, "batch", "agent/attach")
	p.Detach("k1")
	h.Fact(ctx, "ticket.report", nil, escouade.About{})
	if a := <-cr.attached; a.Key != "k2" {
		t.Errorf("after a detach the plugin was given %v", a)
	}
}

func TestCrashBudget(t *testing.T) {
	h, j := newHost(t, &escouade.Options{CrashBudget: 2, Backoff: time.Millisecond})
	cr := &crasher{attached: make(chan protocol.AttachParams, 8)}
	cr.die.Store(true)
	ctx := context.Background()
	p, err := h.StartFunc(ctx, parseManifest(t, "cr", `,"permissions":{"events":["ticket.report"]}`), "", cr.run)
	if err != nil {
		t.Fatal(err)
	}
	h.Fact(ctx, "ticket.report", nil, escouade.About{})
	e := j.wait(t, "cr", "disabled")
	if e.level != slog.LevelError || e.attrs["crashes"] != "3" {
		t.Errorf("entry %v", e)
	}
	waitFor(t, "the plugin is disabled", func() bool { return p.State() == escouade.StateDisabled })
	if n := cr.lives.Load(); n != 3 {
		t.Errorf("%d lives, want the first and two restarts", n)
	}
	if got := len(j.find("cr", "restart failed")); got != 2 {
		t.Errorf("%d failed restarts journaled", got)
	}
	if h.Plugin("cr") != p {
		t.Error("a disabled plugin should stay listed")
	}
	p.Stop(ctx)
	if h.Plugin("cr") != nil {
		t.Error("a stopped plugin should be forgotten")
	}
}

// steppingClock moves ten minutes on at each reading: every crash is out
// of the window of the one before.
type steppingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(10 * time.Minute)
	return c.t
}

func TestCrashWindow(t *testing.T) {
	h, j := newHost(t, &escouade.Options{CrashBudget: 1, Backoff: time.Millisecond, Clock: &steppingClock{t: time.Unix(0, 0)}})
	cr := &crasher{attached: make(chan protocol.AttachParams, 8)}
	cr.die.Store(true)
	ctx := context.Background()
	p, err := h.StartFunc(ctx, parseManifest(t, "cr", `,"permissions":{"events":["ticket.report"]}`), "", cr.run)
	if err != nil {
		t.Fatal(err)
	}
	h.Fact(ctx, "ticket.report", nil, escouade.About{})
	waitFor(t, "five crashes", func() bool { return cr.lives.Load() >= 5 })
	if len(j.find("cr", "disabled")) != 0 || p.State() == escouade.StateDisabled {
		t.Error("crashes spread over time disabled the plugin")
	}
	p.Stop(ctx)
}

func TestInProcessProtocolVersion(t *testing.T) {
	h, j := newHost(t, nil)
	run := func(ctx context.Context, in io.Reader, out io.Writer) error {
		buf := make([]byte, 4096)
		n, _ := in.Read(buf)
		var req struct{ ID int }
		json.Unmarshal(buf[:n], &req)
		io.WriteString(out, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":7,"capabilities":{}}}`+"\n")
		io.Copy(io.Discard, in)
		return nil
	}
	_, err := h.StartFunc(context.Background(), parseManifest(t, "v7", ""), "", run)
	if !errors.Is(err, escouade.ErrProtocolVersion) {
		t.Fatalf("StartFunc = %v", err)
	}
	j.wait(t, "v7", "another protocol version")
	if h.Plugin("v7") != nil {
		t.Error("the plugin is still listed")
	}
}

func TestHostRefusals(t *testing.T) {
	h, _ := newHost(t, nil)
	ctx := context.Background()
	hs, _ := capture()
	run := func(ctx context.Context, in io.Reader, out io.Writer) error { return plugin.Serve(ctx, in, out, hs) }
	if _, err := h.StartFunc(ctx, parseManifest(t, "d", ""), "", run); err != nil {
		t.Fatal(err)
	}
	if _, err := h.StartFunc(ctx, parseManifest(t, "d", ""), "", run); !errors.Is(err, escouade.ErrDuplicate) {
		t.Errorf("a second plugin d: %v", err)
	}
	dir := writePlugin(t, "w", `"run":{"wasm":"main.wasm"}`, nil)
	if _, err := h.Start(ctx, dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("run.wasm without its module: %v", err)
	}
	dir = writePlugin(t, "nx", `"run":{"command":["/no/such/program"]}`, nil)
	if _, err := h.Start(ctx, dir); err == nil {
		t.Error("a missing program started")
	}
	if _, err := h.Start(ctx, t.TempDir()); err == nil {
		t.Error("a folder without a manifest started")
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(h.Plugins()) != 0 {
		t.Errorf("plugins left after Close: %v", h.Plugins())
	}
	if _, err := h.StartFunc(ctx, parseManifest(t, "e", ""), "", run); !errors.Is(err, protocol.ErrClosed) {
		t.Errorf("a start after Close: %v", err)
	}
}

func TestInitializeParams(t *testing.T) {
	v := newValidator(t)
	h, _ := newHost(t, &escouade.Options{Version: "2.3.4", Lang: "fr"})
	got := make(chan protocol.InitializeParams, 1)
	p := connect(t, h, v, "i", ``, "", plugin.Handlers{
		Initialize: func(ctx context.Context, c *plugin.Conn, p protocol.InitializeParams) (map[string]any, error) {
			got <- p
			return map[string]any{"batch": true, "x": "y"}, nil
		},
	})
	want := protocol.InitializeParams{
		ProtocolVersion: 1, Escouade: protocol.HostInfo{Version: "2.3.4"}, Plugin: protocol.PluginInfo{ID: "i", Version: "1.0.0"},
		Lang: "fr", Capabilities: protocol.Capabilities{Batch: true, Secrets: true, Log: true, Attach: true},
	}
	if g := <-got; g != want {
		t.Errorf("initialize sent %+v, want %+v", g, want)
	}
	if caps := p.Capabilities(); caps["x"] != "y" {
		t.Errorf("capabilities %v", caps)
	}
	if p.ID() != "i" || p.Manifest().Version != "1.0.0" || p.Dir() != "" || p.State() != escouade.StateRunning {
		t.Errorf("plugin %s %s %q %v", p.ID(), p.Manifest().Version, p.Dir(), p.State())
	}
}
