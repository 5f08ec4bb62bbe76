package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// peer is a Conn running over pipes, with the other ends for the test.
type peer struct {
	c      *Conn
	toC    *io.PipeWriter // what the test writes, c reads
	fromC  *bufio.Reader  // what c writes, the test reads
	fromW  *io.PipeWriter
	done   chan error
	events chan Event
}

func newPeer(t *testing.T, h Handler, opts *Options) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &peer{toC: inW, fromC: bufio.NewReader(outR), fromW: outW, done: make(chan error, 1), events: make(chan Event, 64)}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.OnEvent = func(ev Event) {
		select {
		case p.events <- ev:
		default:
		}
	}
	p.c = NewConn(inR, outW, h, &o)
	go func() { p.done <- p.c.Run(context.Background()) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // let the last writes through
		if err := <-p.done; err != nil {
			t.Errorf("Run: %v", err)
		}
		outW.Close()
		outR.Close()
	})
	return p
}

func (p *peer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.toC, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *peer) read(t *testing.T) string {
	t.Helper()
	line, err := p.fromC.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(line, "\n")
}

func (p *peer) event(t *testing.T, kind EventKind) Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-p.events:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %v event", kind)
		}
	}
}

var echo = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
	switch req.Method {
	case "echo":
		return json.RawMessage(req.Params), nil
	case "fail":
		return nil, Errorf(-32004, "failed: on purpose")
	case "oops":
		return nil, errors.New("secret detail")
	}
	return nil, Errorf(CodeMethodNotFound, "method not found: %s", req.Method)
})

func TestServeAnswers(t *testing.T) {
	p := newPeer(t, echo, nil)
	cases := []struct{ in, out string }{
		{`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":[1,2]}}`, `{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}`},
		{`{"jsonrpc":"2.0","id":"x","method":"fail","params":{}}`, `{"jsonrpc":"2.0","id":"x","error":{"code":-32004,"message":"failed: on purpose"}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"oops"}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"internal error"}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"nope"}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: nope"}}`},
		{`garbage`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`},
		{`{"jsonrpc":"2.0","id":4,"method":"echo","Params":{}}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: unknown member \"Params\""}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"echo","method":"oops"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
	}
	for _, c := range cases {
		p.send(t, c.in)
		if got := p.read(t); !strings.HasPrefix(got, c.out) {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.out)
		}
	}
	if ev := p.event(t, EventHandler); ev.Err == nil || ev.Err.Error() != "secret detail" {
		t.Errorf("the handler's own error should reach the journal: %+v", ev)
	}
	p.event(t, EventParse)
	p.event(t, EventInvalid)

	// A blank line is no message: nothing is answered, the next is.
	p.send(t, "   ")
	p.send(t, `{"jsonrpc":"2.0","id":6,"method":"echo","params":[]}`)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":6,"result":[]}` {
		t.Errorf("after a blank line: %s", got)
	}
}

func TestServeBatch(t *testing.T) {
	p := newPeer(t, echo, nil)
	p.send(t, `[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},{"jsonrpc":"2.0","method":"echo","params":[2]},{"bad":1},{"jsonrpc":"2.0","id":2,"method":"fail"}]`)
	got := p.read(t)
	var answers []map[string]any
	if err := json.Unmarshal([]byte(got), &answers); err != nil {
		t.Fatalf("batch answer %s: %v", got, err)
	}
	if len(answers) != 3 {
		t.Fatalf("batch answer has %d entries, want 3 (the notification gets none): %s", len(answers), got)
	}
	// A batch of notifications only is not answered at all.
	p.send(t, `[{"jsonrpc":"2.0","method":"echo","params":[1]}]`)
	p.send(t, `{"jsonrpc":"2.0","id":9,"method":"echo","params":[9]}`)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":9,"result":[9]}` {
		t.Errorf("after a batch of notifications: %s", got)
	}
}

func TestOverlongLine(t *testing.T) {
	p := newPeer(t, echo, &Options{MaxLine: 1024})
	long := `{"jsonrpc":"2.0","id":1,"method":"echo","params":["` + strings.Repeat("a", 5000) + `"]}`
	p.send(t, long)
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a line of ` + itoa(int64(len(long))) + ` bytes is over the cap of 1024"}}`
	if got := p.read(t); got != want {
		t.Errorf("overlong line answered %s", got)
	}
	p.event(t, EventTooLong)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"echo","params":[]}`)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":2,"result":[]}` {
		t.Errorf("after an overlong line: %s", got)
	}
}

func TestBusyPoolAnswersAtOnce(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		started <- struct{}{}
		<-release
		return "done", nil
	})
	p := newPeer(t, h, &Options{Workers: 2, Busy: &Error{Code: -32004, Message: "failed: busy"}})
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"slow"}`)
	<-started
	<-started
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"slow"}`)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":3,"error":{"code":-32004,"message":"failed: busy"}}` {
		t.Errorf("third call with a full pool: %s", got)
	}
	p.event(t, EventBusy)
	close(release)
	got := []string{p.read(t), p.read(t)}
	if !strings.Contains(strings.Join(got, ""), `"id":1,"result":"done"`) || !strings.Contains(strings.Join(got, ""), `"id":2,"result":"done"`) {
		t.Errorf("slow calls answered %q", got)
	}
}

func TestNotificationsInOrder(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	all := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(req.Params))
		if len(seen) == 500 {
			close(all)
		}
		return nil, nil
	})
	p := newPeer(t, h, &Options{Backlog: 1000})
	var b strings.Builder
	for i := range 500 {
		b.WriteString(`{"jsonrpc":"2.0","method":"n","params":[` + itoa(int64(i)) + "]}\n")
	}
	io.WriteString(p.toC, b.String())
	<-all
	for i, s := range seen {
		if s != "["+itoa(int64(i))+"]" {
			t.Fatalf("notification %d came as %s", i, s)
		}
	}
}

func TestNotificationsDroppedWhenBacklogFull(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-release
		return nil, nil
	})
	p := newPeer(t, h, &Options{Backlog: 2})
	defer close(release)
	for range 10 {
		p.send(t, `{"jsonrpc":"2.0","method":"n"}`)
	}
	p.event(t, EventDropped)
}

// pair connects two Conns back to back.
func pair(t *testing.T, ha, hb Handler, oa, ob *Options) (a, b *Conn) {
	t.Helper()
	r1, w1 := io.Pipe()
	r2, w2 := io.Pipe()
	a = NewConn(r1, w2, ha, oa)
	b = NewConn(r2, w1, hb, ob)
	done := make(chan struct{}, 2)
	go func() { a.Run(context.Background()); done <- struct{}{} }()
	go func() { b.Run(context.Background()); done <- struct{}{} }()
	t.Cleanup(func() {
		w1.Close()
		w2.Close()
		<-done
		<-done
	})
	return a, b
}

func TestCall(t *testing.T) {
	a, _ := pair(t, nil, echo, nil, nil)
	ctx := context.Background()
	res, err := a.Call(ctx, "echo", map[string]int{"n": 1})
	if err != nil || string(res) != `{"n":1}` {
		t.Fatalf("Call = %s, %v", res, err)
	}
	_, err = a.Call(ctx, "fail", nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != -32004 || !errors.Is(err, &Error{Code: -32004}) {
		t.Fatalf("Call(fail) = %v", err)
	}
	if _, err := a.Call(ctx, "echo", 5); err == nil {
		t.Fatal("params that are neither object nor array were sent")
	}
	if err := a.Notify("echo", []int{1}); err != nil {
		t.Fatal(err)
	}
}

func TestCallTimeoutAndLateReply(t *testing.T) {
	release := make(chan struct{})
	slow := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		<-release
		return "late", nil
	})
	events := make(chan Event, 8)
	a, _ := pair(t, nil, slow, &Options{
		Timeout: func(string) time.Duration { return 20 * time.Millisecond },
		OnEvent: func(ev Event) { events <- ev },
	}, nil)
	_, err := a.Call(context.Background(), "slow", nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Call = %v, want ErrTimeout", err)
	}
	close(release)
	if ev := <-events; ev.Kind != EventUnknownReply || ev.ID != "1" {
		t.Fatalf("late reply: %+v", ev)
	}
}

func TestCallFailsWhenClosed(t *testing.T) {
	block := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil, nil
	})
	a, _ := pair(t, nil, h, nil, nil)
	errc := make(chan error)
	go func() {
		_, err := a.Call(context.Background(), "wait", nil)
		errc <- err
	}()
	// Close once the call is on its way: it must fail at once, not wait.
	waitFor(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.pending) == 1
	})
	a.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("pending call: %v, want ErrClosed", err)
	}
	if _, err := a.Call(context.Background(), "wait", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	close(block)
}

func TestBatchCall(t *testing.T) {
	a, _ := pair(t, nil, echo, nil, nil)
	calls := []BatchCall{
		{Method: "echo", Params: []int{1}},
		{Method: "echo", Params: []int{2}, Notify: true},
		{Method: "fail"},
		{Method: "echo", Params: map[string]string{"x": "y"}},
	}
	if err := a.Batch(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	if string(calls[0].Result) != "[1]" || calls[1].Result != nil || !errors.Is(calls[2].Err, &Error{Code: -32004}) || string(calls[3].Result) != `{"x":"y"}` {
		t.Fatalf("batch results: %+v", calls)
	}
}

func TestConcurrentCalls(t *testing.T) {
	a, _ := pair(t, nil, echo, nil, &Options{Workers: 64})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				want := "[" + itoa(int64(g*1000+i)) + "]"
				res, err := a.Call(context.Background(), "echo", json.RawMessage(want))
				if err != nil || string(res) != want {
					t.Errorf("Call = %s, %v; want %s", res, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestReplyTwiceIsIgnored(t *testing.T) {
	p := newPeer(t, nil, nil)
	resc := make(chan string)
	go func() {
		res, _ := p.c.Call(context.Background(), "x", nil)
		resc <- string(res)
	}()
	req := p.read(t)
	if req != `{"jsonrpc":"2.0","id":1,"method":"x"}` {
		t.Fatalf("request: %s", req)
	}
	p.send(t, `{"jsonrpc":"2.0","id":1,"result":"first"}`)
	p.send(t, `{"jsonrpc":"2.0","id":1,"result":"second"}`)
	if got := <-resc; got != `"first"` {
		t.Errorf("result %s", got)
	}
	if ev := p.event(t, EventUnknownReply); ev.ID != "1" {
		t.Errorf("event %+v", ev)
	}
}

// waitFor polls cond until it holds, failing the test after ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBatchBounds: the answer to a line is bounded whatever it holds. A
// batch longer than MaxBatch gets one error; a batch whose answers would
// pass MaxBatchAnswer gets an error for the answers past it; Batch sends
// more calls than MaxBatch as several batches.
func TestBatchBounds(t *testing.T) {
	p := newPeer(t, echo, &Options{MaxLine: 2 * MaxBatchAnswer})
	p.send(t, "["+strings.Repeat("1,", 4*MaxBatch)+"1]")
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a batch of more than 256 messages"}}` {
		t.Errorf("a long batch: %s", got)
	}
	big := strings.Repeat("x", MaxBatchAnswer/3)
	var b strings.Builder
	b.WriteByte('[')
	for i := range 4 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":[%q]}`, i, big)
	}
	b.WriteByte(']')
	p.send(t, b.String())
	var answers []struct {
		ID     int
		Result []string
		Error  *Error
	}
	if err := json.Unmarshal([]byte(p.read(t)), &answers); err != nil {
		t.Fatal(err)
	}
	var results, refused int
	for _, a := range answers {
		switch {
		case a.Error != nil && strings.Contains(a.Error.Message, "answer too large for a batch"):
			refused++
		case len(a.Result) == 1 && a.Result[0] == big:
			results++
		}
	}
	if len(answers) != 4 || results != 2 || refused != 2 {
		t.Errorf("%d answers, %d results, %d refused: want 4, 2, 2", len(answers), results, refused)
	}

	a, _ := pair(t, nil, echo, nil, &Options{Workers: MaxBatch})
	calls := make([]BatchCall, 2*MaxBatch+1)
	for i := range calls {
		calls[i] = BatchCall{Method: "echo", Params: []int{i}}
	}
	if err := a.Batch(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	for i, c := range calls {
		if string(c.Result) != fmt.Sprintf("[%d]", i) || c.Err != nil {
			t.Fatalf("call %d: %s, %v", i, c.Result, c.Err)
		}
	}
}

// TestHandlerPanics holds a handler's panic to a failed request: the
// request and a notification are answered and reported as failures, and
// the connection serves the next request.
func TestHandlerPanics(t *testing.T) {
	h := HandlerFunc(func(_ context.Context, req *Request) (any, error) {
		if req.Method == "boom" {
			panic("a bug")
		}
		return "fine", nil
	})
	p := newPeer(t, h, nil)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"boom"}`)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}` {
		t.Errorf("a panic answered %s", got)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"boom"}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"ok"}`)
	if got := p.read(t); got != `{"jsonrpc":"2.0","id":2,"result":"fine"}` {
		t.Errorf("after a panic: %s", got)
	}
	for range 2 {
		ev := <-p.events
		if ev.Kind != EventHandler || ev.Method != "boom" || !strings.Contains(ev.Err.Error(), "panicked: a bug") {
			t.Errorf("event %v %s %v, want the handler's panic", ev.Kind, ev.Method, ev.Err)
		}
	}
}
