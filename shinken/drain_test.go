package shinken_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// events keeps what a Runtime records, for tests.
type events struct {
	mu     sync.Mutex
	all    []shinken.Event
	closed chan struct{} // gets a value per EventSessionClosed
}

func newEvents() *events { return &events{closed: make(chan struct{}, 16)} }

func (e *events) Record(ev shinken.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	if ev.Kind == shinken.EventSessionClosed {
		e.closed <- struct{}{}
	}
}

func (e *events) count(kind shinken.EventKind, verb aci.Verb, outcome string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == kind && (verb == "" || ev.Verb == verb) && (outcome == "" || ev.Outcome == outcome) {
			n++
		}
	}
	return n
}

// TestRecorder runs a scripted session and checks that the recorder was
// told exactly what it did.
func TestRecorder(t *testing.T) {
	ev := newEvents()
	e := newEnv(t, &shinken.RuntimeOptions{Recorder: ev})
	ctx := testCtx(t)
	c := e.dial(t, nil)
	for range 3 {
		if _, err := c.Screenshot(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	obs, err := c.Observe(ctx, &client.ObserveRequest{Settle: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Click(ctx, aci.Ref("e99999")); err == nil {
		t.Fatal("click on a stale ref succeeded")
	}
	if _, err := client.Dial(ctx, e.url, &client.DialOptions{Token: "wrong"}); err == nil {
		t.Fatal("bad token admitted")
	}
	c.Close()
	<-ev.closed

	checks := []struct {
		what string
		got  int
		want int
	}{
		{"sessions opened", ev.count(shinken.EventSessionOpened, "", ""), 1},
		{"sessions closed", ev.count(shinken.EventSessionClosed, "", ""), 1},
		{"hellos refused", ev.count(shinken.EventHelloRefused, "", "unauthorized"), 1},
		{"screenshots ok", ev.count(shinken.EventAction, aci.VerbScreenshot, "ok"), 3},
		// The client revalidates with if_none_match: the two repeats of an
		// unchanged screen are not_modified, with nothing encoded.
		{"screenshot encodes", ev.count(shinken.EventScreenshot, "", "png"), 1},
		{"observes ok", ev.count(shinken.EventAction, aci.VerbObserve, "ok"), 1},
		{"observe captures", ev.count(shinken.EventObservation, "", ""), 1},
		{"exec actions", ev.count(shinken.EventAction, aci.VerbExec, "ok"), 1},
		{"exec runs", ev.count(shinken.EventExec, "", "exited"), 1},
		{"stale clicks", ev.count(shinken.EventAction, aci.VerbClick, string(aci.CodeStaleElementRef)), 1},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: %d, want %d", ch.what, ch.got, ch.want)
		}
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, x := range ev.all {
		switch x.Kind {
		case shinken.EventScreenshot:
			if x.Bytes <= 0 {
				t.Errorf("screenshot event without bytes: %+v", x)
			}
		case shinken.EventObservation:
			if x.Nodes != *obs.NodeCount {
				t.Errorf("observe event nodes %d, observation %d", x.Nodes, *obs.NodeCount)
			}
		}
	}
}

// TestDrain drains with a call in flight: the runtime says it is draining
// at once, refuses new connections and new calls, lets the call finish,
// then closes the session with 1001.
func TestDrain(t *testing.T) {
	ev := newEvents()
	e := newEnv(t, &shinken.RuntimeOptions{Recorder: ev})
	r := e.raw(t, false)
	// A streamed exec is in flight until the command exits, which it does
	// when its stdin closes: the test decides when.
	r.send(`{"type":"action","call_id":"x","action":{"verb":"exec","argv":["sh","-c","sleep 0.3; echo done"],"stream":true}}`)
	if m := r.read(); m.MessageType() != "ack" {
		t.Fatalf("got %s, want the exec's ack", m.MessageType())
	}
	drained := make(chan error, 1)
	go func() { drained <- e.rt.Drain(context.Background()) }()
	for !e.rt.Draining() {
		// Drain sets the flag before anything else; this only yields
		// until its goroutine has run that far.
		runtime.Gosched()
	}
	// A new connection is refused before any hello.
	ctx := testCtx(t)
	_, resp, err := websocket.Dial(ctx, e.srv, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("dial while draining: %v %v", err, resp)
	}
	// A new call on the open session is refused.
	r.send(`{"type":"query","call_id":"q","q":"platform"}`)
	var sawExit, sawRefusal bool
	for !sawExit || !sawRefusal {
		switch m := r.read().(type) {
		case *aci.Result:
			if m.CallID != "q" || m.OK || !strings.HasPrefix(m.Error, string(aci.CodeClosed)) {
				t.Fatalf("query while draining: %+v", m)
			}
			sawRefusal = true
		case *aci.ExecExit:
			if m.ExitCode == nil || *m.ExitCode != 0 {
				t.Fatalf("the in-flight exec did not finish: %+v", m)
			}
			sawExit = true
		}
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.readRaw(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("after the drain: %v, want 1001", err)
	}
	if n := ev.count(shinken.EventHelloRefused, "", "draining"); n != 1 {
		t.Fatalf("%d draining refusals recorded", n)
	}
}

// TestDrainDeadline drains with a call that outlives the deadline: Drain
// returns the deadline's error and closes the session anyway.
func TestDrainDeadline(t *testing.T) {
	e := newEnv(t, nil)
	r := e.raw(t, false)
	r.send(`{"type":"action","call_id":"w","action":{"verb":"wait","ms":60000}}`)
	r.send(`{"type":"query","call_id":"p","q":"platform"}`)
	r.read() // the platform: the wait is being handled
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.rt.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Drain: %v", err)
	}
	if _, _, err := r.readRaw(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("after the drain: %v, want 1001", err)
	}
}

// TestSetToken rotates the token: the open session is closed with 1008,
// the old token is refused and the new one admitted.
func TestSetToken(t *testing.T) {
	e := newEnv(t, nil)
	r := e.raw(t, false)
	e.rt.SetToken("new-token")
	_, _, err := r.readRaw()
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "token changed" {
		t.Fatalf("old session: %v, want 1008 token changed", err)
	}
	ctx := testCtx(t)
	if _, err := client.Dial(ctx, e.url, &client.DialOptions{Token: testToken}); !errors.Is(err, aci.ErrUnauthorized) {
		t.Fatalf("old token: %v", err)
	}
	c, err := client.Dial(ctx, e.url, &client.DialOptions{Token: "new-token"})
	if err != nil {
		t.Fatalf("new token: %v", err)
	}
	c.Close()
}

// TestKeepAlive: an idle client that answers pings keeps its session; one
// that stops reading (so answers none) is closed.
func TestKeepAlive(t *testing.T) {
	// WriteTimeout, which bounds the wait for a pong, leaves room for the
	// validating proxy, which reads nothing while it checks a screenshot.
	ev := newEvents()
	e := newEnv(t, &shinken.RuntimeOptions{Recorder: ev, KeepAlive: 20 * time.Millisecond, WriteTimeout: 2 * time.Second})
	ctx := testCtx(t)
	c := e.dial(t, nil)
	// A connection straight to the runtime (the validating proxy would
	// answer the pings itself) that reads nothing after its welcome: pings
	// go unanswered and the runtime closes it.
	ws, _, err := websocket.Dial(ctx, e.srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","v":0,"client":{"name":"silent","version":"1"},"token":"test-token"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); err != nil {
		t.Fatal(err)
	}
	<-ev.closed
	// The client read all along (it answers pings as it reads): still
	// served after the other was found dead.
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := ev.count(shinken.EventSessionClosed, "", ""); n != 1 {
		t.Fatalf("%d sessions closed, want the silent one only", n)
	}
}

// TestMessageCap: replies over MaxMessage become too_large failures of
// the same call, and the session goes on.
func TestMessageCap(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{MaxMessage: 8 << 10})
	ctx := testCtx(t)
	c := e.dial(t, nil)
	if _, err := c.Screenshot(ctx, nil); !errors.Is(err, aci.ErrTooLarge) {
		t.Fatalf("screenshot over the cap: %v", err)
	}
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"head", "-c", "20000", "/dev/zero"}}); !errors.Is(err, aci.ErrTooLarge) {
		t.Fatalf("exec result over the cap: %v", err)
	}
	if _, err := c.Screenshot(ctx, &client.ScreenshotRequest{MaxLongEdge: 64}); err != nil {
		t.Fatalf("small screenshot: %v", err)
	}
}

// rawSession opens a session on url with a hello of its own, reading the
// welcome.
func rawSession(t *testing.T, ctx context.Context, url string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","v":0,"client":{"name":"raw","version":"1"},"token":"test-token"}`)); err != nil {
		t.Fatal(err)
	}
	_, data, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(data), `"welcome"`) {
		t.Fatalf("welcome: %s %v", data, err)
	}
	schematest.Valid(t, "", data)
	return ws
}

// waitInFlight sends a one-minute wait on ws and returns once it is in
// flight: the pong to a later ping comes once the reader has handed the
// wait to its goroutine.
func waitInFlight(t *testing.T, ctx context.Context, ws *websocket.Conn) {
	t.Helper()
	for _, msg := range []string{`{"type":"action","call_id":"w","action":{"verb":"wait","ms":60000}}`, `{"type":"ping","t":1}`} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	if _, data, err := ws.Read(ctx); err != nil || !strings.Contains(string(data), `"pong"`) {
		t.Fatalf("pong: %s %v", data, err)
	} else {
		schematest.Valid(t, "", data)
	}
}

// TestClientKilledOutcome: a client that vanishes (its connection dropped,
// no close handshake) with an action in flight gets that action counted as
// client_closed, never as the backend's error.
func TestClientKilledOutcome(t *testing.T) {
	ev := newEvents()
	e := newEnv(t, &shinken.RuntimeOptions{Recorder: ev})
	ctx := testCtx(t)
	ws := rawSession(t, ctx, e.url)
	waitInFlight(t, ctx, ws)
	ws.CloseNow()
	<-ev.closed
	if n := ev.count(shinken.EventAction, aci.VerbWait, shinken.OutcomeClientClosed); n != 1 {
		t.Fatalf("%d waits counted client_closed, want 1 (%d backend_error, %d ok)", n,
			ev.count(shinken.EventAction, aci.VerbWait, string(aci.CodeBackend)), ev.count(shinken.EventAction, aci.VerbWait, "ok"))
	}
}

// TestCloseRestarted: a Runtime closed because its desktop was restarted
// ends its sessions with 1012 and a reason saying so, which the client
// reports as ErrDesktopRestarted (and closed) to the calls in flight and to
// the ones after; a Runtime that shuts down still says 1001.
func TestCloseRestarted(t *testing.T) {
	ev := newEvents()
	e := newEnv(t, &shinken.RuntimeOptions{Recorder: ev})
	ctx := testCtx(t)
	c := e.dial(t, nil)
	x, err := c.ExecStream(ctx, &aci.ExecRequest{Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	ws := rawSession(t, ctx, e.srv)
	waitInFlight(t, ctx, ws)
	// The raw session reads meanwhile, so it answers the close handshake
	// (the runtime waits for that, up to 5 s, before it drops a session).
	ended := closeOf(ctx, ws)
	if err := e.rt.CloseRestarted(); err != nil {
		t.Fatal(err)
	}
	err = <-ended
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 1012 || ce.Reason != shinken.ReasonDesktopRestarted {
		t.Fatalf("raw session closed with %v", err)
	}
	if n := ev.count(shinken.EventAction, aci.VerbWait, string(aci.CodeClosed)); n != 1 {
		t.Fatalf("%d waits in flight counted closed, want 1", n)
	}
	// The exec in flight ends with the session: with its exit, if the
	// runtime sent it before the close, else with the close's error.
	for {
		_, err := x.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !errors.Is(err, client.ErrDesktopRestarted) || !errors.Is(err, aci.ErrClosed) {
				t.Fatalf("exec in flight: %v, want ErrDesktopRestarted and closed", err)
			}
			break
		}
	}
	// Every call after the close says why, read or not yet read by the
	// client when the call is made.
	if err := c.Ping(ctx); !errors.Is(err, client.ErrDesktopRestarted) {
		t.Fatalf("ping after the close: %v", err)
	}
	if _, err := c.Screenshot(ctx, nil); !errors.Is(err, client.ErrDesktopRestarted) || !errors.Is(err, aci.ErrClosed) {
		t.Fatalf("call after the close: %v", err)
	}

	e = newEnv(t, nil)
	ended = closeOf(ctx, rawSession(t, ctx, e.srv))
	e.rt.Close()
	if err := <-ended; !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
		t.Fatalf("shutdown closed with %v, want 1001", err)
	}
}

// closeOf reads ws until it fails, and sends why.
func closeOf(ctx context.Context, ws *websocket.Conn) <-chan error {
	ch := make(chan error, 1)
	go func() {
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				ch <- err
				return
			}
		}
	}()
	return ch
}
