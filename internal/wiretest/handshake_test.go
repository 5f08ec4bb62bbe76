package wiretest

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// TestWelcome checks the welcome of a valid hello: version 0, a server with
// a platform, and capabilities that advertise what the headless backend
// with an executor provides.
func TestWelcome(t *testing.T) {
	d := startDaemon(t)
	w, f := dialWire(t, d, nil)
	if f.M.V == nil || *f.M.V != 0 {
		t.Errorf("welcome v: %s", f)
	}
	c := welcomeOf(t, f)
	if c.SchemaVersion != 0 {
		t.Errorf("schema_version %d", c.SchemaVersion)
	}
	want := []string{"click", "double_click", "right_click", "move", "drag", "mouse_down", "mouse_up", "scroll",
		"type_text", "key", "screenshot", "start_screencast", "stop_screencast", "wait", "observe",
		"invoke_action", "set_value", "exec", "clipboard_get", "clipboard_set", "launch_app", "activate_window"}
	got := slices.Sorted(slices.Values(c.Verbs))
	if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("verbs %v, want %v", c.Verbs, want)
	}
	for _, tk := range []string{"point_px", "point_norm", "element_ref"} {
		if !slices.Contains(c.Targets, tk) {
			t.Errorf("targets %v lack %s", c.Targets, tk)
		}
	}
	if !c.BinaryFrames || !c.FrameDedup || !c.ObserveAfterAct || !c.Structured {
		t.Errorf("capabilities %+v: want binary_frames, frame_dedup, observe_after_act, structured_observation", c)
	}
	if !slices.Contains(c.ImageFormats, "png") || !slices.Contains(c.ImageFormats, "jpeg") {
		t.Errorf("image_formats %v", c.ImageFormats)
	}
	if c.MaxLongEdge < 1 {
		t.Errorf("max_long_edge %d", c.MaxLongEdge)
	}
	if err := w.ping(ctxT(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
}

// TestHelloRefused sends bad first messages, each followed at once by a
// query and a ping, and checks that the daemon answers nothing but a close
// frame: 1008 "unauthorized: ..." for token failures, some close code with
// a reason for the rest.
func TestHelloRefused(t *testing.T) {
	d := startDaemon(t)
	hello := func(extra string) string {
		return `{"type":"hello","v":0,"client":{"name":"wiretest","version":"0"}` + extra + `}`
	}
	tok := `,"token":"` + token + `"`
	cases := []struct {
		name   string
		first  string
		binary bool
		auth   bool // a token failure: 1008 "unauthorized:"
	}{
		{name: "no token", first: hello(""), auth: true},
		{name: "wrong token", first: hello(`,"token":"nope"`), auth: true},
		{name: "empty token", first: hello(`,"token":""`), auth: true},
		{name: "token prefix", first: hello(`,"token":"` + token[:len(token)-1] + `"`), auth: true},
		{name: "token suffix", first: hello(`,"token":"` + token + `x"`), auth: true},
		{name: "token other case", first: hello(`,"token":"` + strings.ToUpper(token) + `"`), auth: true},
		{name: "token as number", first: hello(`,"token":42`)},
		{name: "token twice", first: hello(tok + `,"token":"nope"`)},
		{name: "token twice reversed", first: hello(`,"token":"nope"` + tok)},
		{name: "Token key", first: hello(`,"Token":"` + token + `"`)},
		{name: "v 1", first: `{"type":"hello","v":1,"client":{"name":"a","version":"0"}` + tok + `}`},
		{name: "v -1", first: `{"type":"hello","v":-1,"client":{"name":"a","version":"0"}` + tok + `}`},
		{name: "v 0.5", first: `{"type":"hello","v":0.5,"client":{"name":"a","version":"0"}` + tok + `}`},
		{name: "v string", first: `{"type":"hello","v":"0","client":{"name":"a","version":"0"}` + tok + `}`},
		{name: "v missing", first: `{"type":"hello","client":{"name":"a","version":"0"}` + tok + `}`},
		{name: "v huge", first: `{"type":"hello","v":1e400,"client":{"name":"a","version":"0"}` + tok + `}`},
		{name: "no client", first: `{"type":"hello","v":0` + tok + `}`},
		{name: "client name number", first: `{"type":"hello","v":0,"client":{"name":1,"version":"0"}` + tok + `}`},
		{name: "client without version", first: `{"type":"hello","v":0,"client":{"name":"a"}` + tok + `}`},
		{name: "unknown field", first: hello(tok + `,"extra":true`)},
		{name: "call_id on hello", first: hello(tok + `,"call_id":"c1"`)},
		{name: "bad observation type", first: hello(tok + `,"accept":{"observation_types":["bogus"]}`)},
		{name: "binary_frames string", first: hello(tok + `,"accept":{"binary_frames":"yes"}`)},
		{name: "type twice", first: `{"type":"hello","type":"hello","v":0,"client":{"name":"a","version":"0"}` + tok + `}`},
		{name: "invalid utf8 name", first: "{\"type\":\"hello\",\"v\":0,\"client\":{\"name\":\"\xff\xfe\",\"version\":\"0\"}" + tok + "}"},
		{name: "long unknown key é", first: hello(tok + `,"` + strings.Repeat("é", 100) + `":1`)},
		{name: "long unknown key emoji", first: hello(tok + `,"a` + strings.Repeat("😀", 50) + `":1`)},
		{name: "first a ping", first: `{"type":"ping","t":1}`},
		{name: "first a query", first: `{"type":"query","call_id":"q1","q":"platform"}`},
		{name: "first an action", first: `{"type":"action","call_id":"a1","action":{"verb":"screenshot"}}`},
		{name: "first a welcome", first: `{"type":"welcome","v":0,"server":{"name":"x","version":"0","platform":"linux"},"capabilities":{"schema_version":0,"verbs":[],"targets":[],"observation_types":[]}}`},
		{name: "binary hello", first: hello(tok), binary: true},
		{name: "not JSON", first: `hello`},
		{name: "JSON array", first: `[` + hello(tok) + `]`},
		{name: "trailing data", first: hello(tok) + `{}`},
		{name: "empty message", first: ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWire(t, dialRaw(t, d))
			w.lenient = true
			ctx := ctxT(t, 20*time.Second)
			typ := websocket.MessageText
			if tc.binary {
				typ = websocket.MessageBinary
			}
			if err := w.ws.Write(ctx, typ, []byte(tc.first)); err != nil {
				t.Fatal(err)
			}
			// Pipelined right behind the hello: neither may be answered.
			w.trySend(`{"type":"query","call_id":"q2","q":"platform"}`)
			w.trySend(`{"type":"ping","t":7}`)
			code, reason, err := w.closed(ctx)
			if err != nil {
				t.Fatalf("refused hello: %v", err)
			}
			if got := w.snapshot(); len(got) > 0 {
				t.Errorf("the daemon sent %d message(s) after a refused hello, first %s", len(got), got[0])
			}
			if reason == "" || len(reason) > 123 || !utf8.ValidString(reason) {
				t.Errorf("close %d with reason %q: want a UTF-8 reason of 1 to 123 bytes", code, reason)
			}
			if tc.auth {
				if code != websocket.StatusPolicyViolation || !strings.HasPrefix(reason, "unauthorized") {
					t.Errorf("close %d %q, want 1008 \"unauthorized: ...\"", code, reason)
				}
				return
			}
			switch code {
			case websocket.StatusProtocolError, websocket.StatusUnsupportedData, websocket.StatusInvalidFramePayloadData,
				websocket.StatusPolicyViolation:
			default:
				t.Errorf("close %d %q: not a refusal code", code, reason)
			}
		})
	}
	// The daemon is fine after all that.
	w, _ := dialWire(t, d, nil)
	if err := w.ping(ctxT(t, 10*time.Second), 3); err != nil {
		t.Fatal(err)
	}
}

// TestHandshakeTimeout opens connections that never complete a hello, one
// silent and one that sends a hello's first fragment and stalls: the
// daemon closes both with a reason once its handshake timeout (10 s by
// default) has passed, and serves others meanwhile.
func TestHandshakeTimeout(t *testing.T) {
	t.Parallel() // it waits out the daemon's 10 s
	d := startDaemon(t)
	silent := newWire(t, dialRaw(t, d))
	silent.lenient = true

	stalled := newWire(t, dialRaw(t, d))
	stalled.lenient = true
	wr, err := stalled.ws.Writer(ctxT(t, 10*time.Second), websocket.MessageText)
	if err != nil {
		t.Fatal(err)
	}
	// Larger than the writer's buffer, so fragments go out; the final one
	// never does.
	part := `{"type":"hello","v":0,"token":"` + token + `","client":{"version":"0","name":"` + strings.Repeat("x", 64<<10)
	if _, err := wr.Write([]byte(part)); err != nil {
		t.Fatal(err)
	}

	// Meanwhile another client is served.
	w, _ := dialWire(t, d, nil)
	if err := w.ping(ctxT(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	for name, c := range map[string]*wire{"silent": silent, "stalled": stalled} {
		code, reason, err := c.closed(ctxT(t, 25*time.Second))
		if err != nil {
			t.Errorf("%s client: %v", name, err)
			continue
		}
		if code != websocket.StatusPolicyViolation || reason == "" {
			t.Errorf("%s client closed with %d %q, want 1008 and a reason", name, code, reason)
		}
		if got := c.snapshot(); len(got) > 0 {
			t.Errorf("%s client got %s before the close", name, got[0])
		}
	}
	t.Logf("both closed %v after the check started", time.Since(start).Round(time.Millisecond))
	// The fragment writer is dead now; closing it must not hang.
	wr.Close()
}

// TestHelloTwice sends a second hello after the welcome: the daemon closes
// the connection with 1008 and a reason.
func TestHelloTwice(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	w.send(map[string]any{"type": "hello", "v": 0, "client": map[string]any{"name": "again", "version": "0"}, "token": token})
	code, reason, err := w.closed(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if code != websocket.StatusPolicyViolation || reason == "" {
		t.Errorf("close %d %q, want 1008 with a reason", code, reason)
	}
}

// TestServerMessagesFromClient sends, after the welcome, well-formed
// messages that only a server sends. Each either gets an in-band reply or
// closes the connection with a reason; nothing is silently ignored.
func TestServerMessagesFromClient(t *testing.T) {
	d := startDaemon(t)
	for _, m := range []string{
		`{"type":"pong","t":1}`,
		`{"type":"ack","call_id":"x1","ok":true}`,
		`{"type":"result","call_id":"x2","ok":true,"value":1}`,
		`{"type":"observation","obs_id":"o1"}`,
		`{"type":"exec_exit","cause":"x3","exit_code":0,"timed_out":false,"duration_ms":1,"truncated":false}`,
		`{"type":"exec_output","cause":"x4","seq":0,"channel":"stdout","data_b64":""}`,
		`{"type":"welcome","v":0,"server":{"name":"x","version":"0","platform":"linux"},"capabilities":{"schema_version":0,"verbs":[],"targets":[],"observation_types":[]}}`,
	} {
		w, _ := dialWire(t, d, nil)
		w.send(m)
		w.trySend(`{"type":"ping","t":5}`)
		ctx := ctxT(t, 10*time.Second)
		f, err := w.next(ctx)
		if err == nil {
			if f.isReply() && (f.M.OK == nil || *f.M.OK) {
				t.Errorf("%s answered with %s, want ok=false", m, f)
			}
			if f.M.Type == "pong" {
				t.Errorf("%s was silently ignored: the next thing back was the pong", m)
			}
			continue
		}
		code, reason, cerr := w.closed(ctx)
		if cerr != nil || reason == "" {
			t.Errorf("%s: connection ended with %d %q %v, want a close with a reason", m, code, reason, cerr)
		}
	}
}

// TestBinaryOptIn checks that image-bearing observations are binary frames
// exactly when the hello opted in, and that everything else stays text:
// acks, results, not_modified, exec_exit.
func TestBinaryOptIn(t *testing.T) {
	d := startDaemon(t)
	for _, tc := range []struct {
		name   string
		hello  string
		binary bool
	}{
		{"absent", ``, false},
		{"false", `,"accept":{"binary_frames":false}`, false},
		{"empty accept", `,"accept":{}`, false},
		{"true", `,"accept":{"binary_frames":true}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWire(t, dialRaw(t, d))
			w.send(`{"type":"hello","v":0,"client":{"name":"b","version":"0"},"token":"` + token + `"` + tc.hello + `}`)
			if f, err := w.next(ctxT(t, 10*time.Second)); err != nil || f.M.Type != "welcome" || f.Binary {
				t.Fatalf("welcome: %v %v", f, err)
			}
			shot := w.do("s1", map[string]any{"verb": "screenshot", "max_long_edge": 200})
			if shot.M.Type != "observation" || shot.Binary != tc.binary || shot.M.Image == nil {
				t.Fatalf("screenshot: binary=%v, want %v: %s", shot.Binary, tc.binary, shot)
			}
			nm := w.do("s2", map[string]any{"verb": "screenshot", "max_long_edge": 200, "if_none_match": shot.M.FrameHash})
			if nm.Binary || nm.M.NotModified == nil {
				t.Errorf("not_modified must be a JSON text frame: %s", nm)
			}
			// observe-after-act follows the session's framing too.
			a := w.do("c1", map[string]any{"verb": "move", "target": map[string]any{"kind": "point_px", "x": 3, "y": 3},
				"observe": map[string]any{"max_long_edge": 100}})
			mustOK(t, a, "ack")
			if a.Binary {
				t.Errorf("ack sent binary")
			}
			o, err := w.take(ctxT(t, 10*time.Second), func(f *frame) bool { return f.M.Type == "observation" && f.M.Cause == "c1" })
			if err != nil {
				t.Fatalf("observe-after-act: %v", err)
			}
			if o.Binary != tc.binary {
				t.Errorf("observe-after-act binary=%v, want %v", o.Binary, tc.binary)
			}
			ex := w.do("e1", map[string]any{"verb": "exec", "argv": []string{"echo", "hi"}, "stream": true})
			mustOK(t, ex, "ack")
			out, err := w.take(ctxT(t, 10*time.Second), func(f *frame) bool { return f.M.Type == "exec_output" && f.M.Cause == "e1" })
			if err != nil {
				t.Fatal(err)
			}
			if out.Binary != tc.binary {
				t.Errorf("exec_output binary=%v, want %v", out.Binary, tc.binary)
			}
			exit, err := w.take(ctxT(t, 10*time.Second), func(f *frame) bool { return f.M.Type == "exec_exit" && f.M.Cause == "e1" })
			if err != nil {
				t.Fatal(err)
			}
			if exit.Binary {
				t.Errorf("exec_exit must be text")
			}
		})
	}
}

// TestCrossOriginRefused dials with a browser Origin of another site: a web
// page the user visits must not reach the daemon, token or not. The
// daemon's own origin is accepted.
func TestCrossOriginRefused(t *testing.T) {
	d := startDaemon(t)
	host := strings.TrimSuffix(strings.TrimPrefix(d.url, "ws://"), "/aci")
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"http://evil.example", false},
		{"http://" + host + ".evil.example", false},
		{"null", false},
		{"http://" + host, true},
	} {
		ctx := ctxT(t, 10*time.Second)
		ws, resp, err := websocket.Dial(ctx, d.url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {tc.origin}}})
		if ws != nil {
			closeGently(ws)
		}
		if (err == nil) != tc.ok {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Errorf("Origin %q: err %v (HTTP %d), want accepted=%v", tc.origin, err, status, tc.ok)
		}
	}
}

// TestHelloOverReadLimit sends a first message past the 16 MiB read limit:
// the daemon closes with 1009 and sends nothing else.
func TestHelloOverReadLimit(t *testing.T) {
	d := startDaemon(t)
	w := newWire(t, dialRaw(t, d))
	w.lenient = true
	hello := `{"type":"hello","v":0,"token":"` + token + `","client":{"version":"0","name":"` + strings.Repeat("h", 16<<20) + `"}}`
	w.trySend(hello) // the daemon may close before it has all of it
	code, reason, err := w.closed(ctxT(t, 20*time.Second))
	if err != nil || code != websocket.StatusMessageTooBig || reason == "" {
		t.Errorf("a hello over the read limit: close %d %q %v, want 1009 with a reason", code, reason, err)
	}
	if got := w.snapshot(); len(got) > 0 {
		t.Errorf("the daemon answered: %s", got[0])
	}
}
