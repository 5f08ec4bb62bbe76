package plugin_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// host plays the Host's side by hand: it writes lines to a plugin and reads
// its answers.
type host struct {
	toPlugin *io.PipeWriter
	answers  *bufio.Reader
	done     chan error
}

func serve(t *testing.T, ctx context.Context, hs plugin.Handlers) *host {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &host{toPlugin: inW, answers: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		h.done <- plugin.Serve(ctx, inR, outW, hs)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-h.done
		inR.Close()
	})
	return h
}

func (h *host) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(h.toPlugin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (h *host) read(t *testing.T) string {
	t.Helper()
	l, err := h.answers.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(l, "\n")
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"escouade":{"version":"9.9.9"},"plugin":{"id":"p","version":"1.0.0"},"lang":"fr","capabilities":{"batch":true}}}`

func TestServe(t *testing.T) {
	var mu sync.Mutex
	var facts []protocol.Fact
	factc := make(chan struct{}, 10)
	var shut bool
	var conn *plugin.Conn
	h := serve(t, context.Background(), plugin.Handlers{
		Initialize: func(ctx context.Context, c *plugin.Conn, p protocol.InitializeParams) (map[string]any, error) {
			conn = c
			return map[string]any{"batch": true}, nil
		},
		Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) {
			mu.Lock()
			facts = append(facts, f)
			mu.Unlock()
			factc <- struct{}{}
		},
		Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
			switch p.Request.Kind {
			case "refuse":
				return protocol.Decision{}, &protocol.Error{Code: protocol.CodeRefused, Message: "refused: no"}
			case "odd":
				return protocol.Decision{Verdict: "maybe"}, nil
			}
			return protocol.Decision{Verdict: protocol.Deny, Message: "no " + p.Project.Name}, nil
		},
		Shutdown: func(ctx context.Context, c *plugin.Conn) error {
			shut = true
			return nil
		},
	})
	h.send(t, initialize)
	if got := h.read(t); got != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{"batch":true}}}` {
		t.Errorf("initialize: %s", got)
	}
	if i := conn.Init(); i.Escouade.Version != "9.9.9" || i.Lang != "fr" || !i.Capabilities.Batch {
		t.Errorf("Init = %+v", i)
	}
	decide := func(id, kind string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"permissions/decide","params":{"request":{"id":"r","kind":"` + kind + `"},"project":{"id":"p","name":"P","private":false}}}`
	}
	cases := []struct{ in, out string }{
		{decide("2", "command"), `{"jsonrpc":"2.0","id":2,"result":{"decision":"deny","message":"no P"}}`},
		{decide("3", "refuse"), `{"jsonrpc":"2.0","id":3,"error":{"code":-32003,"message":"refused: no"}}`},
		{decide("4", "odd"), `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"internal error"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"permissions/decide","params":{"request":{"id":"r","kind":"k"}}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"invalid params: project: missing"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"net/fetch","params":{}}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"method not found: net/fetch"}}`},
		{`{"jsonrpc":"2.0","id":7,"method":"permissions/decide","params":{"request":{"id":"r","Kind":"k"},"project":{"id":"p","name":"P","private":false}}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: request.kind: missing"}}`},
	}
	for _, c := range cases {
		h.send(t, c.in)
		if got := h.read(t); got != c.out {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.out)
		}
	}
	for i := range 3 {
		h.send(t, `{"jsonrpc":"2.0","method":"events/fact","params":{"name":"agent.created","version":1,"seq":`+string(rune('1'+i))+`,"at":"2025-01-01T00:00:00Z","data":{},"future":true}}`)
	}
	h.send(t, `{"jsonrpc":"2.0","method":"events/fact","params":{"name":"agent.created"}}`) // dropped: it does not hold
	for range 3 {
		<-factc
	}
	mu.Lock()
	for i, f := range facts {
		if f.Seq != int64(i+1) {
			t.Errorf("fact %d has seq %d", i, f.Seq)
		}
	}
	mu.Unlock()
	h.send(t, `{"jsonrpc":"2.0","id":8,"method":"shutdown"}`)
	if got := h.read(t); got != `{"jsonrpc":"2.0","id":8,"result":null}` || !shut {
		t.Errorf("shutdown: %s (handler ran: %v)", got, shut)
	}
	h.toPlugin.Close()
	if err := <-h.done; err != nil {
		t.Errorf("Serve at the end of its input: %v", err)
	}
	h.done <- nil // for the cleanup
}

func TestServeWithoutHandlers(t *testing.T) {
	h := serve(t, context.Background(), plugin.Handlers{})
	h.send(t, initialize)
	if got := h.read(t); got != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{}}}` {
		t.Errorf("initialize: %s", got)
	}
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"permissions/decide","params":{"request":{"id":"r","kind":"k"},"project":{"id":"p","name":"P","private":false}}}`)
	if got := h.read(t); !strings.Contains(got, `"code":-32601`) {
		t.Errorf("decide without a handler: %s", got)
	}
}

func TestServeEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := serve(t, ctx, plugin.Handlers{})
	cancel()
	if err := <-h.done; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve = %v", err)
	}
	h.done <- nil
}

func TestCallsAnsweredByHand(t *testing.T) {
	conns := make(chan *plugin.Conn, 1)
	h := serve(t, context.Background(), plugin.Handlers{
		Initialize: func(ctx context.Context, c *plugin.Conn, p protocol.InitializeParams) (map[string]any, error) {
			conns <- c
			return nil, nil
		},
	})
	h.send(t, initialize)
	h.read(t)
	c := <-conns
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.Secret(context.Background(), "token")
		errc <- err
	}()
	if got := h.read(t); got != `{"jsonrpc":"2.0","id":1,"method":"secrets/get","params":{"key":"token"}}` {
		t.Errorf("request: %s", got)
	}
	h.send(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"notYours: token"}}`)
	err := <-errc
	var e *protocol.Error
	if !errors.As(err, &e) || e.Code != protocol.CodeNotYours || !errors.Is(err, protocol.ErrNotYours) {
		t.Errorf("Secret = %v", err)
	}
	go func() { errc <- c.Log(0, "hi") }()
	if got := h.read(t); got != `{"jsonrpc":"2.0","method":"log","params":{"level":"info","message":"hi"}}` {
		t.Errorf("log: %s", got)
	}
	if err := <-errc; err != nil {
		t.Error(err)
	}
}
