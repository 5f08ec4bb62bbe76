package jsonrpc

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A request served inline by the reading goroutine may call the other side
// back: the answer it waits for is routed by a reader that takes over.
func TestInlineHandlerCallsBack(t *testing.T) {
	var b *Conn
	ready := make(chan struct{})
	hb := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-ready
		// Calls back twice, the second time after reading has moved.
		r1, err := b.Call(ctx, "echo", json.RawMessage(`[1]`))
		if err != nil {
			return nil, err
		}
		r2, err := b.Call(ctx, "echo", json.RawMessage(`[2]`))
		if err != nil {
			return nil, err
		}
		return json.RawMessage(`[` + string(r1) + `,` + string(r2) + `]`), nil
	})
	a, bb := pair(t, echo, hb, nil, nil)
	b = bb
	close(ready)
	for i := range 50 {
		res, err := a.Call(context.Background(), "ask", nil)
		if err != nil || string(res) != `[[1],[2]]` {
			t.Fatalf("call %d = %s, %v", i, res, err)
		}
	}
}

// A slow request served inline does not hold up the requests and
// notifications behind it: reading moves on after a moment.
func TestSlowInlineRequestDoesNotHoldReading(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	noted := make(chan string, 1)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "slow":
			close(started)
			<-release
			return "slow done", nil
		case "note":
			noted <- string(req.Params)
			return nil, nil
		}
		return "fast", nil
	})
	p := newPeer(t, h, nil)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	<-started
	p.send(t, `{"jsonrpc":"2.0","method":"note","params":["n"]}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"fast"}`)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":2,"result":"fast"}` {
		t.Fatalf("while a slow request runs: %s", got)
	}
	if got := <-noted; got != `["n"]` {
		t.Errorf("notification %s", got)
	}
	close(release)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":1,"result":"slow done"}` {
		t.Errorf("slow request: %s", got)
	}
	// Reading goes on after the hand-over, inline again.
	for i := 3; i < 20; i++ {
		p.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"fast"}`)
		if got, want := p.read(t), `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"result":"fast"}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

// Requests served inline and by workers together stay within Workers.
func TestInlineCountsAgainstWorkers(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	running, most := 0, 0
	started := make(chan struct{}, 8)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		started <- struct{}{}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return nil, nil
	})
	p := newPeer(t, h, &Options{Workers: 3})
	for i := range 3 {
		p.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"slow"}`)
		<-started
	}
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"slow"}`)
	if got := p.read(t); !strings.Contains(got, `"id":4,"error"`) {
		t.Errorf("a fourth request with three workers: %s", got)
	}
	close(release)
	for range 3 {
		p.read(t)
	}
	if most != 3 {
		t.Errorf("at most %d requests ran at once, want 3", most)
	}
}

// Requests that call back, answer at once, or outlast the inline budget,
// from many goroutines on both sides at once: every call gets its own
// answer, whichever goroutine reads at the time.
func TestInlineStress(t *testing.T) {
	var a, b *Conn
	handler := func(self **Conn) Handler {
		return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "echo":
				return json.RawMessage(req.Params), nil
			case "back":
				res, err := (*self).Call(ctx, "echo", json.RawMessage(req.Params))
				return json.RawMessage(res), err
			case "slow":
				time.Sleep(2 * inlineBudget) // past the budget: reading moves on
				return json.RawMessage(req.Params), nil
			}
			return nil, Errorf(CodeMethodNotFound, "no %s", req.Method)
		})
	}
	a, b = pair(t, handler(&a), handler(&b), &Options{Workers: 64}, &Options{Workers: 64})
	var wg sync.WaitGroup
	methods := []string{"echo", "back", "echo", "slow", "back", "echo"}
	for g := range 6 {
		for _, c := range []*Conn{a, b} {
			wg.Go(func() {
				for i := range 60 {
					m := methods[(g+i)%len(methods)]
					want := "[" + strconv.Itoa(g*1000+i) + "]"
					res, err := c.Call(context.Background(), m, json.RawMessage(want))
					if err != nil || string(res) != want {
						t.Errorf("%s = %s, %v; want %s", m, res, err, want)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}
