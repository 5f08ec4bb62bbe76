package shinken_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/shinkentest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testToken = "test-token"

type env struct {
	rt    *shinken.Runtime
	desk  *headless.Desktop
	url   string // through the validating proxy
	srv   string // the runtime's own ws:// URL, bypassing the proxy
	proxy *schematest.Proxy
}

// newEnv serves a headless desktop (1280×800) with an OS executor behind a
// schema-validating proxy, all torn down with the test.
func newEnv(t *testing.T, opts *shinken.RuntimeOptions) *env {
	t.Helper()
	desk := headless.New(nil)
	o := shinken.RuntimeOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Token == "" {
		o.Token = testToken
	}
	if o.Executor == nil {
		o.Executor = osexec.New(nil)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	rt := shinken.NewRuntime(desk, &o)
	srv := httptest.NewServer(rt)
	t.Cleanup(func() {
		rt.Close()
		srv.Close()
	})
	proxy := schematest.NewProxy(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	return &env{rt: rt, desk: desk, url: proxy.URL + "/aci", proxy: proxy, srv: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

func (e *env) dial(t *testing.T, opts *client.DialOptions) *client.Client {
	t.Helper()
	o := client.DialOptions{Token: testToken}
	if opts != nil {
		o = *opts
		if o.Token == "" {
			o.Token = testToken
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, e.url, &o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testCtx bounds a test's calls: a hang guard, not a pace. A test of a
// few subtests under the race detector, on two cores shared with a build,
// took more than 30 s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestWelcomeAdvertisesBackend(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	w := c.Welcome()
	caps := w.Capabilities
	if w.Server.Platform != aci.PlatformLinux || !caps.BinaryFrames || !caps.FrameDedup || !caps.ObserveAfterAct || !caps.StructuredObservation {
		t.Fatalf("welcome = %+v", w)
	}
	for _, v := range []aci.Verb{aci.VerbClick, aci.VerbScreenshot, aci.VerbExec, aci.VerbObserve, aci.VerbLaunchApp, aci.VerbClipboardGet} {
		if !contains(caps.Verbs, v) {
			t.Errorf("welcome lacks %s", v)
		}
	}

	// Without an executor, exec is not advertised and is refused.
	rt := shinken.NewRuntime(headless.New(nil), &shinken.RuntimeOptions{Token: "x"})
	defer rt.Close()
	if contains(rt.Capabilities().Verbs, aci.VerbExec) {
		t.Error("exec advertised without an executor")
	}
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestHandshakeRefusals(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{HandshakeTimeout: 300 * time.Millisecond})
	ctx := testCtx(t)

	_, err := client.Dial(ctx, e.url, &client.DialOptions{Token: "wrong"})
	if !errors.Is(err, aci.ErrUnauthorized) {
		t.Fatalf("wrong token: %v", err)
	}

	cases := []struct {
		name  string
		first string // "" sends nothing
		code  websocket.StatusCode
	}{
		{"no hello", "", websocket.StatusPolicyViolation},
		{"ping first", `{"type":"ping"}`, websocket.StatusPolicyViolation},
		{"no token", `{"type":"hello","v":0,"client":{"name":"a","version":"1"}}`, websocket.StatusPolicyViolation},
		{"bad version", `{"type":"hello","v":1,"client":{"name":"a","version":"1"},"token":"test-token"}`, websocket.StatusPolicyViolation},
		{"garbage", `{{{`, websocket.StatusPolicyViolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, _, err := websocket.Dial(ctx, e.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			if tc.first != "" {
				if err := ws.Write(ctx, websocket.MessageText, []byte(tc.first)); err != nil {
					t.Fatal(err)
				}
			}
			_, data, err := ws.Read(ctx)
			if err == nil {
				t.Fatalf("got a message instead of a close: %s", data)
			}
			if got := websocket.CloseStatus(err); got != tc.code {
				t.Fatalf("close status %d, want %d (%v)", got, tc.code, err)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := c.Platform(ctx)
	if err != nil || p != aci.PlatformLinux {
		t.Fatalf("platform %q %v", p, err)
	}
	sz, err := c.ScreenSize(ctx)
	if err != nil || sz.W != 1280 || sz.H != 800 {
		t.Fatalf("screen size %+v %v", sz, err)
	}
	ready, err := c.Ready(ctx)
	if err != nil || !ready {
		t.Fatalf("ready %v %v", ready, err)
	}
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	ws, err := c.ListWindows(ctx)
	if err != nil || len(ws) != 1 || ws[0].Title == "" || ws[0].Active == nil || !*ws[0].Active || len(ws[0].BBox) != 4 {
		t.Fatalf("windows %+v %v", ws, err)
	}
}

// findElement observes and returns the first element with role and name.
func findElement(t *testing.T, ctx context.Context, c *client.Client, role, name string) aci.Element {
	t.Helper()
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	for _, el := range obs.Elements {
		if el.Role == role && (name == "" || el.Name == name) {
			return el
		}
	}
	t.Fatalf("no %s %q in:\n%s", role, name, obs.TreeText)
	return aci.Element{}
}

func center(el aci.Element) *aci.Target {
	return aci.Px(el.BBox[0]+el.BBox[2]/2, el.BBox[1]+el.BBox[3]/2)
}

func TestInputReachesWidgets(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.LaunchApp(ctx, "form"); err != nil {
		t.Fatal(err)
	}
	entry := findElement(t, ctx, c, "text", "")
	if err := c.Click(ctx, center(entry)); err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(ctx, "héllo ✓ 日本"); err != nil {
		t.Fatal(err)
	}
	if err := c.Key(ctx, "BackSpace ctrl+a"); err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(ctx, "Ada"); err != nil {
		t.Fatal(err)
	}
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, el := range obs.Elements {
		if el.Ref == entry.Ref {
			got = el.Value
		}
	}
	if got != "Ada" {
		t.Fatalf("entry value %q after typing, want Ada\n%s", got, obs.TreeText)
	}
	if obs.Focus != entry.Ref {
		t.Errorf("focus %q, want %q", obs.Focus, entry.Ref)
	}

	// Pointer verbs and the pointer in screenshots.
	if err := c.Move(ctx, aci.Norm(0.5, 0.5)); err != nil {
		t.Fatal(err)
	}
	shot, err := c.Screenshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if shot.Pointer == nil || *shot.Pointer != image.Pt(640, 400) {
		t.Errorf("pointer %v after a move to the centre", shot.Pointer)
	}
	for _, err := range []error{
		c.Scroll(ctx, aci.Px(10, 10), 0, 2),
		c.Drag(ctx, aci.Px(100, 100), aci.Px(200, 150), 50*time.Millisecond),
		c.MouseDown(ctx, nil, aci.PointerRight),
		c.MouseUp(ctx, nil, aci.PointerRight),
		c.DoubleClick(ctx, aci.Px(5, 5)),
		c.RightClick(ctx, aci.Px(5, 5)),
		c.Wait(ctx, time.Millisecond),
	} {
		if err != nil {
			t.Error(err)
		}
	}
	if err := c.Click(ctx, aci.Px(5000, 5)); !errors.Is(err, aci.ErrInvalidAction) {
		t.Errorf("click off-screen: %v", err)
	}
	if err := c.Key(ctx, "ctrl+nosuchkey!"); !errors.Is(err, aci.ErrInvalidAction) {
		t.Errorf("bad key: %v", err)
	}
}

func TestClipboardAndWindows(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.ClipboardSet(ctx, "copié ✓"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ClipboardGet(ctx); err != nil || got != "copié ✓" {
		t.Fatalf("clipboard %q %v", got, err)
	}
	for _, app := range []string{"notes", "form"} {
		if err := c.LaunchApp(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.LaunchApp(ctx, "no-such-app"); !errors.Is(err, aci.ErrNoSuchApp) {
		t.Errorf("launching a missing app: %v", err)
	}
	ws, _ := c.ListWindows(ctx)
	var notes uint64
	for _, w := range ws {
		if strings.Contains(strings.ToLower(w.Title), "notes") {
			notes = w.ID
		}
	}
	if err := c.ActivateWindow(ctx, notes); err != nil {
		t.Fatal(err)
	}
	ws, _ = c.ListWindows(ctx)
	for _, w := range ws {
		if (w.ID == notes) != *w.Active {
			t.Errorf("after activating %d: %+v", notes, w)
		}
	}
	if err := c.ActivateWindowTitled(ctx, "FORM"); err != nil {
		t.Fatal(err)
	}
	if err := c.ActivateWindow(ctx, 999999); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Errorf("activating a missing window: %v", err)
	}
	if err := c.ActivateWindowTitled(ctx, "zzz"); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Errorf("activating a missing title: %v", err)
	}
}

// rawConn is a hand-driven WebSocket session for wire-level tests.
type rawConn struct {
	t  *testing.T
	ws *websocket.Conn
}

func (e *env) raw(t *testing.T, binary bool) *rawConn {
	t.Helper()
	ctx := testCtx(t)
	ws, _, err := websocket.Dial(ctx, e.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	t.Cleanup(func() { ws.CloseNow() })
	r := &rawConn{t: t, ws: ws}
	hello := `{"type":"hello","v":0,"client":{"name":"raw","version":"1"},"token":"test-token"}`
	if binary {
		hello = `{"type":"hello","v":0,"client":{"name":"raw","version":"1"},"token":"test-token","accept":{"binary_frames":true}}`
	}
	r.send(hello)
	if m := r.read(); m.MessageType() != "welcome" {
		t.Fatalf("got %s, want welcome", m.MessageType())
	}
	return r
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if err := r.ws.Write(context.Background(), websocket.MessageText, []byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawConn) readRaw() (websocket.MessageType, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return r.ws.Read(ctx)
}

func (r *rawConn) read() aci.Message {
	r.t.Helper()
	typ, data, err := r.readRaw()
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	if typ == websocket.MessageBinary {
		m, _, err := aci.DecodeBinaryFrame(data)
		if err != nil {
			r.t.Fatal(err)
		}
		return m
	}
	m, err := aci.Unmarshal(data)
	if err != nil {
		r.t.Fatalf("runtime sent %s: %v", data, err)
	}
	return m
}

// TestBadInputFromTheWire sends broken messages. Each with a call_id gets an
// in-band refusal with a prefixed error, and the session goes on; the rest
// close only that connection, with a reason.
func TestBadInputFromTheWire(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{ReadLimit: 64 << 10})
	inband := []struct {
		msg    string
		reply  string // ack or result
		prefix string
	}{
		{`{"type":"action","call_id":"a1","action":{"verb":"click"}}`, "ack", "invalid_action: "},
		{`{"type":"action","call_id":"a2","action":{"verb":"explode"}}`, "ack", "invalid_action: "},
		{`{"type":"action","call_id":"a3","action":{"verb":"wait","bogus":1}}`, "ack", "invalid_action: "},
		{`{"type":"action","call_id":"a4","action":{"verb":"exec","argv":["true"],"pty":true}}`, "result", "invalid_action: "},
		{`{"type":"action","call_id":"a5","action":{"verb":"click","target":{"kind":"element_ref","ref":"e99"}}}`, "ack", "stale_element_ref: "},
		{`{"type":"action","call_id":"a6","action":{"verb":"set_value","target":{"kind":"point_px","x":1,"y":1},"text":"x"}}`, "ack", "invalid_action: "},
		{`{"type":"action","call_id":"a7","action":{"verb":"screenshot","scope":"window:4242"}}`, "ack", "no_such_window: "},
		{`{"type":"action","call_id":"a8","action":{"verb":"observe","structured":false}}`, "ack", "invalid_action: "},
		{`{"type":"action","call_id":"a9","action":{"verb":"exec","argv":["/no/such/program"]}}`, "result", "exec_spawn_failed: "},
		{`{"type":"query","call_id":"q1","q":"everything"}`, "result", "invalid_message: "},
		{`{"type":"query","call_id":"q2","q":"ready","extra":true}`, "result", "invalid_message: "},
		{`{"type":"action","call_id":"a10","action":{"verb":"invoke_action","target":{"kind":"element_ref","ref":"bogus"}}}`, "ack", "invalid_action: "},
	}
	r := e.raw(t, false)
	for _, tc := range inband {
		r.send(tc.msg)
		m := r.read()
		var ok bool
		var msg string
		switch m := m.(type) {
		case *aci.Ack:
			ok, msg = m.OK, m.Error
		case *aci.Result:
			ok, msg = m.OK, m.Error
		}
		if m.MessageType() != tc.reply || ok || !strings.HasPrefix(msg, tc.prefix) {
			t.Errorf("%s\n  answered %s ok=%v %q, want %s %q...", tc.msg, m.MessageType(), ok, msg, tc.reply, tc.prefix)
		}
	}
	// The session still works.
	r.send(`{"type":"query","call_id":"q9","q":"ready"}`)
	if res, ok := r.read().(*aci.Result); !ok || !res.OK {
		t.Fatalf("session broken after bad input: %+v", res)
	}

	closing := []struct {
		name string
		send func(*rawConn)
		code websocket.StatusCode
	}{
		{"not JSON", func(r *rawConn) { r.send("not json at all") }, websocket.StatusInvalidFramePayloadData},
		{"no call_id", func(r *rawConn) { r.send(`{"type":"action","action":{"verb":"wait"}}`) }, websocket.StatusInvalidFramePayloadData},
		{"binary from client", func(r *rawConn) { r.ws.Write(context.Background(), websocket.MessageBinary, []byte{1, 2, 3}) }, websocket.StatusUnsupportedData},
		{"hello twice", func(r *rawConn) {
			r.send(`{"type":"hello","v":0,"client":{"name":"a","version":"1"},"token":"test-token"}`)
		}, websocket.StatusPolicyViolation},
		{"server message", func(r *rawConn) { r.send(`{"type":"pong"}`) }, websocket.StatusPolicyViolation},
		{"over the read limit", func(r *rawConn) {
			r.send(`{"type":"action","call_id":"big","action":{"verb":"type_text","text":"` + strings.Repeat("x", 100<<10) + `"}}`)
		}, websocket.StatusMessageTooBig},
	}
	for _, tc := range closing {
		t.Run(tc.name, func(t *testing.T) {
			r := e.raw(t, false)
			other := e.raw(t, false)
			tc.send(r)
			_, data, err := r.readRaw()
			if got := websocket.CloseStatus(err); got != tc.code {
				t.Fatalf("close status %d (%v, %s), want %d", got, err, data, tc.code)
			}
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Reason == "" {
				t.Errorf("close without a reason")
			}
			// Another client is unaffected.
			other.send(`{"type":"ping","t":1}`)
			if m := other.read(); m.MessageType() != "pong" {
				t.Fatalf("other client got %s", m.MessageType())
			}
		})
	}
}

func TestScreenshot(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	for _, binary := range []bool{true, false} {
		c := e.dial(t, &client.DialOptions{TextFrames: !binary})
		if err := c.LaunchApp(ctx, "notes"); err != nil {
			t.Fatal(err)
		}
		shot, err := c.Screenshot(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		img, err := shot.Image()
		if err != nil {
			t.Fatal(err)
		}
		d := shot.Display
		if img.Bounds().Dx() != 1280 || d.W != 1280 || d.H != 800 || d.Delivered.W != 1280 || d.SourceRect.W != 1280 || len(shot.Hash) != 32 {
			t.Fatalf("shot %+v", shot)
		}
		// The second identical request is answered not_modified.
		again, err := c.Screenshot(ctx, nil)
		if err != nil || !again.Cached || again.Hash != shot.Hash {
			t.Fatalf("second shot cached=%v hash=%s err=%v", again.Cached, again.Hash, err)
		}

		// Downscale and JPEG.
		small, err := c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatJPEG, Quality: 60, MaxLongEdge: 640})
		if err != nil {
			t.Fatal(err)
		}
		si, err := small.Image()
		if err != nil || si.Bounds().Dx() != 640 || si.Bounds().Dy() != 400 || small.Display.Delivered.W != 640 || small.Display.SourceRect.W != 1280 {
			t.Fatalf("small shot %v %+v", err, small.Display)
		}

		// Window scopes.
		ws, _ := c.ListWindows(ctx)
		win, err := c.Screenshot(ctx, &client.ScreenshotRequest{Scope: aci.WindowScope(ws[0].ID)})
		if err != nil {
			t.Fatal(err)
		}
		sr := win.Display.SourceRect
		if []int{sr.X, sr.Y, sr.W, sr.H}[2] != ws[0].BBox[2] || sr.X != ws[0].BBox[0] || win.Width != sr.W {
			t.Fatalf("window shot source %+v, window bbox %v", sr, ws[0].BBox)
		}
		act, err := c.Screenshot(ctx, &client.ScreenshotRequest{Scope: aci.ScopeActiveWindow})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			ar := act.Display.SourceRect
			if *w.Active && (ar.X != w.BBox[0] || ar.Y != w.BBox[1] || ar.W != w.BBox[2] || ar.H != w.BBox[3]) {
				t.Fatalf("active window shot %+v, active window %v", ar, w.BBox)
			}
		}
	}
	text, bin := e.proxy.Counts()
	if bin == 0 || text == 0 {
		t.Fatalf("text %d binary %d messages: both framings should have been used", text, bin)
	}
}

func TestNotModifiedDoesNoEncoding(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	before := shinken.Encodes(e.rt)
	for range 5 {
		s, err := c.Screenshot(ctx, nil)
		if err != nil || !s.Cached {
			t.Fatalf("cached=%v err=%v", s != nil && s.Cached, err)
		}
	}
	if n := shinken.Encodes(e.rt) - before; n != 0 {
		t.Fatalf("%d encodes for not_modified answers", n)
	}
	// A change yields a fresh frame.
	if err := c.LaunchApp(ctx, "form"); err != nil {
		t.Fatal(err)
	}
	s, err := c.Screenshot(ctx, nil)
	if err != nil || s.Cached {
		t.Fatalf("after a change: cached=%v err=%v", s != nil && s.Cached, err)
	}
}

func TestObserveAfterAct(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	app := "notes"
	max := 320
	rep, err := c.Do(ctx, &aci.Action{Verb: aci.VerbLaunchApp, App: &app, Observe: &aci.ObserveSpec{MaxLongEdge: &max}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ack == nil || !rep.Ack.OK || rep.Observation == nil || rep.Observation.CallID != rep.Ack.CallID || len(rep.Image) == 0 {
		t.Fatalf("reply %+v", rep)
	}
	if rep.Observation.Display.Delivered.W != 320 {
		t.Fatalf("delivered %+v", rep.Observation.Display.Delivered)
	}
}

func TestBatch(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	app := "form"
	no := false
	b := &aci.ActionBatch{StopOnError: &no, Actions: []aci.Action{
		{Verb: aci.VerbLaunchApp, App: &app},
		{Verb: aci.VerbClick, Target: aci.Ref("e999")},
		{Verb: aci.VerbWait, MS: 1},
	}}
	reps, err := c.Batch(ctx, b)
	if len(reps) != 3 || !errors.Is(err, aci.ErrStaleElementRef) {
		t.Fatalf("batch without stop: %d replies, %v", len(reps), err)
	}
	b.StopOnError = nil
	reps, err = c.Batch(ctx, b)
	if len(reps) != 2 || err == nil {
		t.Fatalf("batch with stop: %d replies, %v", len(reps), err)
	}
}

func TestConcurrentClients(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	errs := make(chan error, 8)
	for i := range 4 {
		go func() {
			c, err := client.Dial(ctx, e.url, &client.DialOptions{Token: testToken, TextFrames: i%2 == 0})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for range 10 {
				if err := c.Click(ctx, aci.Px(float64(10*i), 10)); err != nil {
					errs <- err
					return
				}
				if _, err := c.Screenshot(ctx, &client.ScreenshotRequest{MaxLongEdge: 200}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestCloseEndsSessions(t *testing.T) {
	e := newEnv(t, nil)
	r := e.raw(t, false)
	e.rt.Close()
	_, _, err := r.readRaw()
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Fatalf("close status %d (%v), want 1001", got, err)
	}
}

// panicky is a backend whose capture panics.
type panicky struct{ *headless.Desktop }

func (p panicky) Capture(ctx context.Context, s aci.Scope) (shinken.Frame, error) {
	panic("capture exploded")
}

func TestHandlerPanicIsAnswered(t *testing.T) {
	desk := headless.New(nil)
	rt := shinken.NewRuntime(panicky{desk}, &shinken.RuntimeOptions{Token: testToken, Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	ctx := testCtx(t)
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Screenshot(ctx, nil); !errors.Is(err, aci.ErrInternal) {
		t.Fatalf("screenshot with a panicking backend: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("session died after a panic: %v", err)
	}
}

// TestUnixSocket serves over a unix socket, where an empty token admits
// every client, while TCP with an empty token admits none.
func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "aci.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	rt := shinken.NewRuntime(headless.New(nil), &shinken.RuntimeOptions{Logger: slog.New(slog.DiscardHandler)})
	done := make(chan error, 1)
	go func() { done <- rt.Serve(l) }()
	ctx := testCtx(t)
	// Dial takes the address the way the daemon's -listen flag does.
	for _, url := range []string{"unix:" + sock, "unix://" + sock} {
		c, err := client.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if _, err := client.Dial(ctx, "unix:", nil); err == nil {
		t.Fatal("Dial(unix:) with no path succeeded")
	}

	tcp := httptest.NewServer(rt)
	_, err = client.Dial(ctx, "ws"+strings.TrimPrefix(tcp.URL, "http"), nil)
	if !errors.Is(err, aci.ErrUnauthorized) {
		t.Fatalf("TCP without a token: %v", err)
	}
	tcp.Close()
	rt.Close()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestOffscreenWindowSpace captures a window that hangs off the top-left of
// the screen: its source_rect starts at negative coordinates.
func TestOffscreenWindowSpace(t *testing.T) {
	e := newEnv(t, nil)
	var win *headless.Window
	e.desk.Register("stray", func(w *headless.Window) {
		w.AddLabel("half out")
		win = w
	})
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.LaunchApp(ctx, "stray"); err != nil {
		t.Fatal(err)
	}
	win.Move(-100, -20)
	ws, _ := c.ListWindows(ctx)
	shot, err := c.Screenshot(ctx, &client.ScreenshotRequest{Scope: aci.Scope(fmt.Sprintf("window:0x%x", ws[0].ID))})
	if err != nil {
		t.Fatal(err)
	}
	sr := shot.Display.SourceRect
	if sr.X != ws[0].BBox[0] || sr.Y != ws[0].BBox[1] || sr.X >= 0 || shot.Width != sr.W || shot.Height != sr.H {
		t.Fatalf("source_rect %+v, window bbox %v, image %dx%d", sr, ws[0].BBox, shot.Width, shot.Height)
	}
}

// TestCancelledCallKeepsSession cancels one call: the session goes on.
func TestCancelledCallKeepsSession(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	short, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Wait(short, 10*time.Second) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("session died with a cancelled call: %v", err)
	}
	// A late reply to the cancelled call is dropped quietly.
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// TestInputCaps refuses input that would hold the shared input device for
// too long.
func TestInputCaps(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{MaxTypeText: 1000, MaxScreencasts: 1})
	c := e.dial(t, nil)
	ctx := testCtx(t)
	if err := c.TypeText(ctx, strings.Repeat("x", 1001)); !errors.Is(err, aci.ErrTooLarge) {
		t.Errorf("long type_text: %v", err)
	}
	if err := c.Key(ctx, strings.Repeat("a ", 300)); !errors.Is(err, aci.ErrTooLarge) {
		t.Errorf("300 key combos: %v", err)
	}
	r := e.raw(t, false)
	r.send(`{"type":"action","call_id":"s1","action":{"verb":"start_screencast","fps":1}}`)
	r.send(`{"type":"action","call_id":"s2","action":{"verb":"start_screencast","fps":1}}`)
	for got := 0; got < 2; {
		if a, ok := r.read().(*aci.Ack); ok {
			got++
			if (a.CallID == "s2") == a.OK {
				t.Errorf("ack %+v: the second screencast should be refused", a)
			}
		}
	}
}

// TestHeldButtonReleased leaves with the button down on a title bar: the
// next client's pointer moves must not drag the window.
func TestHeldButtonReleased(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.dial(t, nil)
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	ws, _ := c.ListWindows(ctx)
	box := ws[0].BBox
	title := aci.Px(float64(box[0]+box[2]/2), float64(box[1]+8))
	if err := c.MouseDown(ctx, title, aci.PointerLeft); err != nil {
		t.Fatal(err)
	}
	c.Close()
	waitFor(t, "the first session to end", 10*time.Second, func() bool { return shinken.LiveConns(e.rt) == 0 })
	c2 := e.dial(t, nil)
	if err := c2.Move(ctx, aci.Px(900, 600)); err != nil {
		t.Fatal(err)
	}
	ws, _ = c2.ListWindows(ctx)
	if got := ws[0].BBox; got[0] != box[0] || got[1] != box[1] {
		t.Fatalf("the window moved from %v to %v: the button the first client held is still down", box, got)
	}
}

// After a reconnect the runtime numbers elements anew: a ref remembered
// from before is refused by the client, before it can hit another element,
// until an observation on the new connection shows it again.
func TestRefsAfterReconnect(t *testing.T) {
	d := headless.New(nil)
	ctx := testCtx(t)
	if err := d.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	c := shinkentest.Serve(t, d, nil)
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatalf("%v in\n%s", err, obs.TreeText)
	}
	if err := c.SetValue(ctx, aci.Ref(name.Ref), "before"); err != nil {
		t.Fatal(err)
	}
	if err := c.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	err = c.SetValue(ctx, aci.Ref(name.Ref), "after")
	if !errors.Is(err, aci.ErrStaleElementRef) || !errors.Is(err, client.ErrRenumbered) {
		t.Fatalf("a ref from before the reconnect: %v", err)
	}
	if err := c.Click(ctx, aci.Ref(name.Ref)); !errors.Is(err, client.ErrRenumbered) {
		t.Fatalf("a click on a ref from before the reconnect: %v", err)
	}
	obs, err = c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if name, err = obs.Find("text", "Name"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetValue(ctx, aci.Ref(name.Ref), "after"); err != nil {
		t.Fatalf("a ref observed after the reconnect: %v", err)
	}
	obs, _ = c.Observe(ctx, nil)
	if name, _ = obs.Find("text", "Name"); name.Value != "after" {
		t.Fatalf("the field reads %q", name.Value)
	}
}
