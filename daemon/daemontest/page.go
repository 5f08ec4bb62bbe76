// Package daemontest helps test a daemon built with package daemon: a
// client of the page's endpoint (/inspect), to drive a takeover as a
// person at the page would.
package daemontest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A Page is a client of a daemon's /inspect, as the page is: it has sent
// its hello, and reads the daemon's messages as JSON objects.
type Page struct {
	t testing.TB
	// WS is the connection, for what Page does not do.
	WS *websocket.Conn
}

// DialPage connects to the /inspect at url (ws://host:port/inspect) and
// sends the hello with token; the test fails if it cannot connect. The
// connection is closed at the test's end.
func DialPage(t testing.TB, url, token string) *Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	p := &Page{t: t, WS: ws}
	p.Send(map[string]any{"type": "hello", "token": token})
	return p
}

// Send sends v as JSON, or v itself when it is a string.
func (p *Page) Send(v any) {
	p.t.Helper()
	var data []byte
	if s, ok := v.(string); ok {
		data = []byte(s)
	} else {
		data, _ = json.Marshal(v)
	}
	if err := p.WS.Write(context.Background(), websocket.MessageText, data); err != nil {
		p.t.Fatal(err)
	}
}

// Next returns the next message of type typ, skipping the others (feed
// events), within 10 s.
func (p *Page) Next(typ string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, data, err := p.WS.Read(ctx)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		if m["type"] == typ {
			return m, nil
		}
	}
}

// Each returns the first message of each of types, in whatever order they
// come, skipping the others; the test fails after 10 s without them.
func (p *Page) Each(types ...string) map[string]map[string]any {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := map[string]map[string]any{}
	for len(got) < len(types) {
		_, data, err := p.WS.Read(ctx)
		if err != nil {
			p.t.Fatalf("waiting for %v (have %v): %v", types, got, err)
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		typ, _ := m["type"].(string)
		if _, seen := got[typ]; !seen && slices.Contains(types, typ) {
			got[typ] = m
		}
	}
	return got
}
