package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/daemon/daemontest"
	"shinken.dev/go/shinken"
)

// inspectRig serves /inspect for a headless desktop in memory.
func inspectRig(t testing.TB) (*shinken.Runtime, *headless.Desktop, string) {
	t.Helper()
	desk := headless.New(nil)
	if err := desk.Launch(context.Background(), "form", nil); err != nil {
		t.Fatal(err)
	}
	feed := shinken.NewFeed()
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "tok", Feed: feed, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(&inspector{rt: func() *shinken.Runtime { return rt }, feed: feed, token: func() string { return "tok" }, log: slog.New(slog.DiscardHandler), ctx: ctx})
	t.Cleanup(func() { cancel(); srv.Close(); rt.Close() })
	return rt, desk, "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestInspectProtocol(t *testing.T) {
	rt, desk, url := inspectRig(t)
	bad := daemontest.DialPage(t, url, "wrong")
	if _, err := bad.Next("welcome"); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("a wrong token: %v", err)
	}

	p := daemontest.DialPage(t, url, "tok")
	if m, err := p.Next("welcome"); err != nil || m["held"] != false {
		t.Fatalf("welcome %v, %v", m, err)
	}
	// Input before a takeover, and bad messages, are refused; the session
	// stays up.
	for _, msg := range []string{
		`{"type":"type","id":1,"text":"x"}`,
		`{"type":"nope"}`,
		`{"type":"pointer","kind":"fly","x":1,"y":1}`,
		`{"type":"pointer","kind":"move","x":-5,"y":1}`,
		`{"type":"keys","keys":"ctrl+frob"}`,
		`{"type":"take","Type":"take"}`,
		`{"type":"take","by":"a","by":"b"}`,
		`not json`,
	} {
		p.Send(msg)
		m, err := p.Next("error")
		if err != nil || m["error"] == "" {
			t.Errorf("%s: %v %v", msg, m, err)
		}
	}
	// The reply and the takeover's feed event come in either order: the
	// feed is written by its own goroutine.
	p.Send(map[string]any{"type": "take", "by": "ada"})
	got := p.Each("held", "event")
	if m := got["held"]; m["held"] != true || m["by"] != "ada" {
		t.Fatalf("take: %v", m)
	}
	if m := got["event"]; m["event"].(map[string]any)["kind"] != "takeover" {
		t.Errorf("the takeover's feed event: %v", m)
	}
	// A second page cannot take it too.
	p2 := daemontest.DialPage(t, url, "tok")
	p2.Next("welcome")
	p2.Send(map[string]any{"type": "take"})
	if m, err := p2.Next("error"); err != nil || !strings.Contains(m["error"].(string), "already held by ada") {
		t.Errorf("a second take: %v %v", m, err)
	}
	p.Send(map[string]any{"type": "type", "id": 7, "text": "日本"})
	if m, err := p.Next("done"); err != nil || m["id"] != 7.0 {
		t.Fatalf("type: %v %v", m, err)
	}
	tree, err := desk.Snapshot(context.Background(), shinken.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range tree.Nodes {
		found = found || n.Value == "日本"
	}
	if !found {
		t.Error("the text typed through /inspect is in no node")
	}
	// A page that leaves hands back.
	p.WS.Close(websocket.StatusNormalClosure, "")
	for {
		m, err := p2.Next("event")
		if err != nil {
			t.Fatalf("no hand back after the page left: %v", err)
		}
		if e := m["event"].(map[string]any); e["kind"] == "takeover" && e["held"] == nil {
			break
		}
	}
	p2.Send(map[string]any{"type": "take"})
	if m, err := p2.Next("held"); err != nil || m["held"] != true {
		t.Errorf("take after the first page left: %v %v", m, err)
	}
	if _, err := rt.TakeOver("x"); !errors.Is(err, shinken.ErrInputHeld) {
		t.Errorf("TakeOver while a page holds: %v", err)
	}
}

// FuzzDecodeInspect: any message gives a message or a typed error.
func FuzzDecodeInspect(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","token":"t"}`, `{"type":"take","by":"Ada"}`, `{"type":"hand_back"}`,
		`{"type":"pointer","id":1,"kind":"down","x":10,"y":20,"button":"left"}`,
		`{"type":"pointer","id":2,"kind":"scroll","x":1,"y":2,"dy":-3}`,
		`{"type":"type","id":3,"text":"é✓日本"}`, `{"type":"keys","id":4,"keys":"ctrl+shift+t"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeInspect(data)
		if err != nil {
			var ie *errInspect
			if !errors.As(err, &ie) && !strings.Contains(err.Error(), ":") {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if m.Type == "" {
			t.Fatal("a message without a type was accepted")
		}
	})
}
