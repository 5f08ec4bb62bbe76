package escouade

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

func TestPipe(t *testing.T) {
	p := newPipe(8)
	r, w := pipeReader{p}, pipeWriter{p}
	var got bytes.Buffer
	done := make(chan error)
	go func() {
		_, err := io.Copy(&got, r)
		done <- err
	}()
	msg := strings.Repeat("0123456789", 100) // far more than the pipe holds
	if n, err := w.Write([]byte(msg)); err != nil || n != len(msg) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	w.Close()
	if err := <-done; err != nil || got.String() != msg {
		t.Fatalf("read %d bytes, %v", got.Len(), err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("a write after the writer closed succeeded")
	}

	// A reader that lets go unblocks a writer waiting for room.
	p = newPipe(4)
	errc := make(chan error)
	go func() {
		_, err := pipeWriter{p}.Write([]byte("0123456789"))
		errc <- err
	}()
	waitUntil(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.buf) == 4
	})
	pipeReader{p}.Close()
	if err := <-errc; err != io.ErrClosedPipe {
		t.Errorf("blocked write: %v", err)
	}
	if _, err := (pipeReader{p}).Read(make([]byte, 1)); err != io.ErrClosedPipe {
		t.Errorf("read after close: %v", err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter(10, 3)
	now := time.Unix(100, 0)
	for i := range 3 {
		if ok, d := l.allow(now); !ok || d != 0 {
			t.Fatalf("token %d: %v %d", i, ok, d)
		}
	}
	for range 5 {
		if ok, _ := l.allow(now); ok {
			t.Fatal("a token past the burst")
		}
	}
	if ok, d := l.allow(now.Add(100 * time.Millisecond)); !ok || d != 5 {
		t.Fatalf("after refill: %v, dropped %d", ok, d)
	}
	l.allow(now.Add(100 * time.Millisecond))
	if d := l.flush(); d != 1 {
		t.Errorf("flush = %d", d)
	}
}

// records is a slog.Handler that keeps messages.
type records struct {
	mu   sync.Mutex
	msgs []string
	cut  int
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "cut" {
			r.cut++
		}
		return true
	})
	return nil
}

func TestStderrWriter(t *testing.T) {
	rec := &records{}
	h := New(&Options{Journal: rec, Secrets: SecretMap{}})
	w := &stderrWriter{j: newJournal(h, "p")}
	w.Write([]byte("one\ntw"))
	w.Write([]byte("o\n" + strings.Repeat("é", maxJournalLine) + "\n"))
	w.Write([]byte("last"))
	w.close()
	if len(rec.msgs) != 4 || rec.msgs[0] != "one" || rec.msgs[1] != "two" || rec.msgs[3] != "last" {
		t.Fatalf("entries %.40q", rec.msgs)
	}
	if long := rec.msgs[2]; len(long) > maxJournalLine || !utf8.ValidString(long) || rec.cut != 1 {
		t.Errorf("a long line: %d bytes, valid %v, cut %d", len(long), utf8.ValidString(long), rec.cut)
	}

	// A flood costs a bounded number of entries, and says what it dropped.
	// The clock stands still: a loaded machine that writes the flood
	// slowly refills no tokens meanwhile.
	rec = &records{}
	h = New(&Options{Journal: rec, Secrets: SecretMap{}, Clock: stoppedClock{}})
	w = &stderrWriter{j: newJournal(h, "p")}
	w.Write(bytes.Repeat([]byte("x\n"), 10000))
	w.j.flush()
	if n := len(rec.msgs); n > journalBurst+10 || !strings.Contains(rec.msgs[n-1], "dropped") {
		t.Errorf("%d entries for 10000 lines; last %q", n, rec.msgs[n-1])
	}
}

func TestRefusedPath(t *testing.T) {
	for name, refused := range map[string]bool{
		"a.txt": false, "data/a.txt": false, "a/b/c": false, "plugin.json.bak": false, "x/plugin.json": false,
		"": true, "/a": true, "..": true, "a/../b": true, "./a": true, "a//b": true, "a/": true,
		".env": true, "a/.git/b": true, `a\b`: true, "plugin.json": true, "PLUGIN.json": true,
	} {
		if got := refusedPath(name) != ""; got != refused {
			t.Errorf("refusedPath(%q) = %q", name, refusedPath(name))
		}
	}
}

func TestFactEncoding(t *testing.T) {
	b := appendFact(nil, "agent.created", 7, time.Date(2025, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600)),
		&ProjectInfo{Project: protocol.Project{ID: "p\"1", Name: "Nom é", Private: true}}, About{
			Ticket: &protocol.Ticket{ID: "t", Key: "ESC-1", Title: "A\nB"}, Agent: &protocol.Agent{ID: "a", Name: "Ada"},
		}, []byte(`{"x":1}`))
	var f protocol.Fact
	if err := f.UnmarshalJSON(b); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	at, err := f.Time()
	if err != nil || !at.Equal(time.Date(2025, 1, 2, 2, 4, 5, 600, time.UTC)) || !strings.HasSuffix(f.At, "Z") {
		t.Errorf("at %q: %v", f.At, err)
	}
	if f.Seq != 7 || f.Version != 1 || f.Project.ID != "p\"1" || !f.Project.Private || f.Ticket.Title != "A\nB" || f.Agent.Name != "Ada" || string(f.Data) != `{"x":1}` {
		t.Errorf("fact %+v", f)
	}
}

// A stoppedClock always tells the same time.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// TestFenceAgrees: the fences are handed a manifest's permissions and
// limits as it declares them (they read manifest's own types, roots and
// name), and the plugin's folder.
func TestFenceAgrees(t *testing.T) {
	m := &manifest.Manifest{ID: "x"}
	m.Permissions.Files = map[string]manifest.Access{"temp": manifest.AccessWrite, "agent": manifest.AccessRead}
	m.Permissions.Network = []string{"api.example.com"}
	m.Permissions.Commands = []string{"git status"}
	m.Permissions.Env = []string{"GIT_DIR"}
	m.Limits = manifest.Limits{FetchMs: 1, FetchBytes: 2, FileBytes: 3}
	p := &Plugin{h: New(nil), m: m, dir: "/plugin"}
	cfg := p.fenceConfig()
	if !maps.Equal(cfg.Files, m.Permissions.Files) || !slices.Equal(cfg.Network, m.Permissions.Network) ||
		!slices.Equal(cfg.Commands, m.Permissions.Commands) || !slices.Equal(cfg.Env, m.Permissions.Env) {
		t.Errorf("permissions %+v", cfg)
	}
	if cfg.Limits != m.Limits || cfg.Dir != "/plugin" {
		t.Errorf("config %+v", cfg)
	}
}
