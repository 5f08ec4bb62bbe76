package wiretest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/schematest"
)

func px(x, y float64) map[string]any { return map[string]any{"kind": "point_px", "x": x, "y": y} }

func ref(r string) map[string]any { return map[string]any{"kind": "element_ref", "ref": r} }

// TestQueries asks every query once and checks each result's value.
func TestQueries(t *testing.T) {
	d := startDaemon(t, "-size", "1024x640")
	w, _ := dialWire(t, d, nil)
	r := w.mustReply(w.query("q1", "platform"))
	mustOK(t, r, "result")
	if string(r.M.Value) != `"linux"` {
		t.Errorf("platform %s", r.M.Value)
	}
	if sw, sh := screenSize(t, w, "q2"); sw != 1024 || sh != 640 {
		t.Errorf("screen_size %dx%d, want 1024x640", sw, sh)
	}
	r = w.mustReply(w.query("q3", "ready"))
	mustOK(t, r, "result")
	if string(r.M.Value) != "true" {
		t.Errorf("ready %s", r.M.Value)
	}
	ws := listWindows(t, w, "q4")
	if len(ws) != 2 {
		t.Fatalf("list_windows: %+v, want notes and form", ws)
	}
	for _, win := range ws {
		if win.ID == 0 || win.Title == "" || len(win.BBox) != 4 || win.Active == nil {
			t.Errorf("window %+v lacks id, title, bbox or active", win)
		}
	}
	// A query the schema does not know is answered in-band, as a result.
	w.send(`{"type":"query","call_id":"q5","q":"uptime"}`)
	mustFail(t, w.mustReply("q5"), "result", "invalid_message")
}

// TestEveryVerb drives every verb once with valid input over the raw
// protocol and checks each reply's shape as the schema's Verb description
// gives it: an ack for most verbs, an observation for screenshot and
// observe, a result for a buffered exec and clipboard_get.
func TestEveryVerb(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	ack := func(id string, a map[string]any) {
		t.Helper()
		mustOK(t, w.do(id, a), "ack")
	}

	// Structured observation first: the element verbs need refs.
	o := w.do("observe1", map[string]any{"verb": "observe"})
	mustOK(t, o, "observation")
	if o.M.Cause != "observe1" || o.M.Tree != "full" || o.M.Revision != 1 || o.M.TreeText == "" ||
		o.M.NodeCount == nil || *o.M.NodeCount != len(o.M.Elements) || len(o.M.Elements) == 0 {
		t.Fatalf("observe: %s", o)
	}
	if o.has("image") || o.has("stream") || o.has("seq") {
		t.Errorf("observe carries pixel or stream fields: %s", o)
	}
	refRE := regexp.MustCompile(`^e[1-9][0-9]*$`)
	byName := map[string]element{}
	focused := ""
	for _, e := range o.M.Elements {
		if !refRE.MatchString(e.Ref) {
			t.Errorf("element ref %q is not e<N>", e.Ref)
		}
		// The compact rules leave out a label beside a field it names
		// (the field carries the name); every other element has its line.
		if !strings.Contains(o.M.TreeText, e.Ref+" ") && !(e.Role == "label" && strings.Contains(o.M.TreeText, strconv.Quote(e.Name))) {
			t.Errorf("tree_text has no line for %s", e.Ref)
		}
		if e.Focused {
			focused = e.Ref
		}
		byName[e.Role+"/"+e.Name] = e
	}
	if o.M.Focus != focused {
		t.Errorf("focus %q, but the focused element is %q", o.M.Focus, focused)
	}
	name, submit, status := byName["text/Name"], byName["push button/Submit"], byName["label/Fill in the form and press Submit."]
	if name.Ref == "" || submit.Ref == "" || status.Ref == "" {
		t.Fatalf("the form's elements are missing: %v", byName)
	}

	ack("set", map[string]any{"verb": "set_value", "target": ref(name.Ref), "text": "Ada"})
	ack("invoke", map[string]any{"verb": "invoke_action", "target": ref(submit.Ref), "text": "click"})
	o2 := w.do("observe2", map[string]any{"verb": "observe", "diff": true, "settle_ms": 10})
	mustOK(t, o2, "observation")
	if o2.M.Revision != 2 || o2.M.Tree != "diff" || o2.M.DiffOf != 1 {
		t.Errorf("second observe with diff: revision %d tree %q diff_of %d, want 2 diff 1", o2.M.Revision, o2.M.Tree, o2.M.DiffOf)
	}
	if !strings.Contains(o2.M.TreeText, "Submitted: Ada") {
		t.Errorf("the diff does not show the submitted form:\n%s", o2.M.TreeText)
	}
	for _, e := range o2.M.Elements {
		if e.Ref == name.Ref && e.Value != "Ada" {
			t.Errorf("set_value did not reach %s: %+v", name.Ref, e)
		}
	}

	// Pixels.
	shot := w.do("shot", map[string]any{"verb": "screenshot"})
	mustOK(t, shot, "observation")
	if shot.M.Cause != "shot" || shot.M.Image == nil || shot.M.Display == nil || shot.M.FrameHash == "" || len(shot.M.Pointer) != 2 {
		t.Errorf("screenshot lacks cause, image, display, frame_hash or pointer: %s", shot)
	}
	if shot.M.Image.Scope != "screen" || shot.has("stream") || shot.has("seq") || shot.has("tiles") {
		t.Errorf("screenshot: %s", shot)
	}

	// Pointer and keyboard.
	ack("move", map[string]any{"verb": "move", "target": px(700, 300)})
	ack("click", map[string]any{"verb": "click", "target": map[string]any{"kind": "point_norm", "x": 0.55, "y": 0.15}})
	ack("dclick", map[string]any{"verb": "double_click", "target": px(700, 120)})
	ack("rclick", map[string]any{"verb": "right_click", "target": ref(name.Ref)})
	ack("down", map[string]any{"verb": "mouse_down", "target": px(100, 700), "button": "middle"})
	ack("up", map[string]any{"verb": "mouse_up", "target": px(100, 700), "button": "middle"})
	ack("down0", map[string]any{"verb": "mouse_down"}) // at the pointer
	ack("up0", map[string]any{"verb": "mouse_up"})
	ack("scroll", map[string]any{"verb": "scroll", "target": px(200, 200), "dy": 2, "dx": -0.3})
	ack("drag", map[string]any{"verb": "drag", "target": px(600, 500), "to": px(650, 520), "duration_ms": 40, "button": "left"})
	ack("type", map[string]any{"verb": "type_text", "text": "héllo, 世界 👋"})
	ack("key", map[string]any{"verb": "key", "keys": "ctrl+a BackSpace"})
	ack("wait", map[string]any{"verb": "wait", "ms": 15})

	// Desktop verbs.
	ack("clipset", map[string]any{"verb": "clipboard_set", "text": "clip ✂ board"})
	cg := w.do("clipget", map[string]any{"verb": "clipboard_get"})
	mustOK(t, cg, "result")
	var clip map[string]any
	if err := json.Unmarshal(cg.M.Value, &clip); err != nil || len(clip) != 1 || clip["text"] != "clip ✂ board" {
		t.Errorf("clipboard_get value %s, want exactly {text}", cg.M.Value)
	}
	before := listWindows(t, w, "lw1")
	ack("launch", map[string]any{"verb": "launch_app", "app": "notes", "args": []string{"from", "wiretest"}})
	after := listWindows(t, w, "lw2")
	if len(after) != len(before)+1 {
		t.Errorf("launch_app: %d windows before, %d after", len(before), len(after))
	}
	ack("activate", map[string]any{"verb": "activate_window", "window_id": before[0].ID})
	ack("activate2", map[string]any{"verb": "activate_window", "app": "FORM"})

	// Exec, buffered: one result whose value is an ExecResult.
	ex := w.do("exec", map[string]any{"verb": "exec", "shell": `printf 'a\377b'; echo err >&2; exit 3`})
	mustOK(t, ex, "result")
	schematest.Valid(t, "ExecResult", ex.M.Value)
	var er struct {
		ExitCode *int   `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		TimedOut bool   `json:"timed_out"`
	}
	json.Unmarshal(ex.M.Value, &er)
	if er.ExitCode == nil || *er.ExitCode != 3 || er.Stdout != "a\uFFFDb" || er.Stderr != "err\n" || er.TimedOut {
		t.Errorf("exec result %s", ex.M.Value)
	}

	// Exec, streamed: ack, exec_output*, exactly one exec_exit.
	checkStreamedExec(t, w, "sexec", `printf 'out\377'; echo err >&2; printf 'more'`, []byte("out\377more"), []byte("err\n"))

	// Screencast: ack, frames, stop.
	checkScreencast(t, w, false)
}

// checkStreamedExec runs a streamed exec and checks the event sequence:
// an ack, exec_output chunks whose seq counts 0, 1, 2... across both
// channels, then one exec_exit and nothing more.
func checkStreamedExec(t *testing.T, w *wire, id, shell string, wantOut, wantErr []byte) {
	t.Helper()
	mustOK(t, w.do(id, map[string]any{"verb": "exec", "shell": shell, "stream": true}), "ack")
	ctx := ctxT(t, 20*time.Second)
	exit, err := w.take(ctx, func(f *frame) bool { return f.M.Type == "exec_exit" && f.M.Cause == id })
	if err != nil {
		t.Fatalf("exec_exit: %v", err)
	}
	if err := w.ping(ctx, 77); err != nil {
		t.Fatal(err)
	}
	var out, errb []byte
	var seq uint64
	for _, f := range w.snapshot() {
		if f.M.Cause != id {
			continue
		}
		w.drop(func(g *frame) bool { return g == f })
		switch f.M.Type {
		case "exec_output":
			if f.N > exit.N {
				t.Errorf("exec_output after exec_exit: %s", f)
			}
			if f.M.Seq == nil || *f.M.Seq != seq {
				t.Errorf("exec_output seq %v, want %d", f.M.Seq, seq)
			}
			seq++
			var data []byte
			if f.Binary {
				data = f.Payload[f.M.Data.Off : f.M.Data.Off+f.M.Data.Len]
			} else {
				data, _ = base64.StdEncoding.DecodeString(*f.M.DataB64)
			}
			if f.M.Channel == "stdout" {
				out = append(out, data...)
			} else {
				errb = append(errb, data...)
			}
		default:
			t.Errorf("a second event for %s after exec_exit: %s", id, f)
		}
	}
	if !bytes.Equal(out, wantOut) || !bytes.Equal(errb, wantErr) {
		t.Errorf("streamed output %q / %q, want %q / %q", out, errb, wantOut, wantErr)
	}
	if string(exit.M.ExitCode) != "0" || exit.M.TimedOut == nil || *exit.M.TimedOut || exit.M.Truncated == nil || *exit.M.Truncated {
		t.Errorf("exec_exit %s", exit)
	}
}

// checkScreencast starts a stream, changes the screen, checks the frames
// (stream id, seq 0, 1, 2..., a first keyframe, display on each), stops it,
// and checks that no frame follows the stop's ack.
func checkScreencast(t *testing.T, w *wire, delta bool) {
	t.Helper()
	mustOK(t, w.do("cast", map[string]any{"verb": "start_screencast", "fps": 20, "max_long_edge": 640, "delta": delta}), "ack")
	ctx := ctxT(t, 20*time.Second)
	isFrame := func(f *frame) bool { return f.M.Type == "observation" && f.M.Stream != "" }
	first, err := w.take(ctx, isFrame)
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if first.M.Seq == nil || *first.M.Seq != 0 || first.M.Image == nil || first.M.Display == nil || first.has("cause") || first.has("pointer") {
		t.Errorf("first frame must be seq 0, a keyframe with display, no cause, no pointer: %s", first)
	}
	stream, seq := first.M.Stream, uint64(1)
	for i := range 3 {
		mustOK(t, w.do(fmt.Sprintf("ct%d", i), map[string]any{"verb": "type_text", "text": "x"}), "ack")
		f, err := w.take(ctx, isFrame)
		if err != nil {
			t.Fatalf("frame after a change: %v", err)
		}
		if f.M.Stream != stream || f.M.Seq == nil || *f.M.Seq != seq || f.M.Display == nil {
			t.Errorf("frame %d: stream %q seq %v, want %q %d: %s", i, f.M.Stream, f.M.Seq, stream, seq, f)
		}
		seq++
	}
	stop := w.do("uncast", map[string]any{"verb": "stop_screencast"})
	mustOK(t, stop, "ack")
	// A change the stream would show at 20 fps, then a round trip long
	// enough for it to do so.
	mustOK(t, w.do("after1", map[string]any{"verb": "type_text", "text": "after the stop"}), "ack")
	mustOK(t, w.do("after2", map[string]any{"verb": "screenshot", "max_long_edge": 64}), "observation")
	mustOK(t, w.do("after3", map[string]any{"verb": "wait", "ms": 200}), "ack")
	for _, f := range w.snapshot() {
		if isFrame(f) && f.N > stop.N {
			t.Errorf("a stream frame arrived after stop_screencast's ack: %s", f)
		}
	}
	w.drop(isFrame)
}

// TestScreencastBinary runs the screencast checks on a binary session.
func TestScreencastBinary(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, &helloOpts{binary: true})
	checkScreencast(t, w, true)
	checkStreamedExec(t, w, "bexec", `head -c 100000 /dev/zero; echo e >&2`, make([]byte, 100000), []byte("e\n"))
}

// TestNotModified checks content negotiation: if_none_match with the fresh
// frame's hash gets exactly {type, obs_id, cause, not_modified, frame_hash}
// (and pointer, when known), as text, on text and binary sessions alike.
func TestNotModified(t *testing.T) {
	d := startDaemon(t)
	for _, bin := range []bool{false, true} {
		w, _ := dialWire(t, d, &helloOpts{binary: bin})
		s := w.do("s1", map[string]any{"verb": "screenshot", "format": "jpeg", "quality": 50})
		mustOK(t, s, "observation")
		nm := w.do("s2", map[string]any{"verb": "screenshot", "if_none_match": s.M.FrameHash})
		mustOK(t, nm, "observation")
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range nm.Keys {
				if !yield(k) {
					return
				}
			}
		})
		want := []string{"cause", "frame_hash", "not_modified", "obs_id", "pointer", "type"}
		if nm.Binary || !slices.Equal(keys, want) || string(nm.Keys["not_modified"]) != "true" ||
			nm.M.FrameHash != s.M.FrameHash || nm.M.Cause != "s2" || nm.M.ObsID == s.M.ObsID {
			t.Errorf("not_modified (binary session %v): %s\nkeys %v, want %v", bin, nm, keys, want)
		}
		// A stale hash gets the full frame.
		full := w.do("s3", map[string]any{"verb": "screenshot", "if_none_match": "0123456789abcdef0123456789abcdef"})
		if full.M.Image == nil || full.M.NotModified != nil {
			t.Errorf("a stale if_none_match must get the image: %s", full)
		}
	}
}

// TestExecSpawnFailure checks both exec forms for a program that does not
// exist: a result with ok=false and exec_spawn_failed for the buffered
// form; an ack, then one exec_exit with exit_code null and the error, for
// the streamed form.
func TestExecSpawnFailure(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	mustFail(t, w.do("b", map[string]any{"verb": "exec", "argv": []string{"/no/such/program"}}), "result", "exec_spawn_failed")
	mustOK(t, w.do("s", map[string]any{"verb": "exec", "argv": []string{"/no/such/program"}, "stream": true}), "ack")
	exit, err := w.take(ctxT(t, 10*time.Second), func(f *frame) bool { return f.M.Type == "exec_exit" && f.M.Cause == "s" })
	if err != nil {
		t.Fatal(err)
	}
	if string(exit.M.ExitCode) != "null" || errCode(exit.M.Error) != "exec_spawn_failed" {
		t.Errorf("exec_exit %s", exit)
	}
	// A bad cwd too.
	mustFail(t, w.do("c", map[string]any{"verb": "exec", "argv": []string{"true"}, "cwd": "/no/such/dir"}), "result", "exec_spawn_failed")
}

// TestExecTimeout checks that a timeout is reported honestly: killed by a
// signal, exit_code null, timed_out true, in both forms.
func TestExecTimeout(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	r := w.do("b", map[string]any{"verb": "exec", "argv": []string{"sleep", "30"}, "timeout_ms": 200})
	mustOK(t, r, "result")
	var er struct {
		ExitCode *int `json:"exit_code"`
		Signal   *int `json:"signal"`
		TimedOut bool `json:"timed_out"`
	}
	json.Unmarshal(r.M.Value, &er)
	if er.ExitCode != nil || er.Signal == nil || !er.TimedOut {
		t.Errorf("buffered timeout: %s", r.M.Value)
	}
	mustOK(t, w.do("s", map[string]any{"verb": "exec", "argv": []string{"sleep", "30"}, "timeout_ms": 200, "stream": true}), "ack")
	exit, err := w.take(ctxT(t, 10*time.Second), func(f *frame) bool { return f.M.Type == "exec_exit" && f.M.Cause == "s" })
	if err != nil {
		t.Fatal(err)
	}
	if string(exit.M.ExitCode) != "null" || exit.M.TimedOut == nil || !*exit.M.TimedOut || len(exit.M.Signal) == 0 || string(exit.M.Signal) == "null" {
		t.Errorf("streamed timeout: %s", exit)
	}
}

// TestErrorReplies sends well-formed calls that must fail, and checks each
// gets one in-band ok=false reply in its verb's reply shape with the
// expected code.
func TestErrorReplies(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	for i, tc := range []struct {
		action map[string]any
		typ    string
		code   string
	}{
		{map[string]any{"verb": "click", "target": px(5000, 10)}, "ack", "invalid_action"},
		{map[string]any{"verb": "click", "target": px(-1, 10)}, "ack", "invalid_action"},
		{map[string]any{"verb": "click", "target": ref("e999999")}, "ack", "stale_element_ref"},
		{map[string]any{"verb": "invoke_action", "target": ref("e999999")}, "ack", "stale_element_ref"},
		{map[string]any{"verb": "invoke_action", "target": ref("x1")}, "ack", "invalid_action"},
		{map[string]any{"verb": "set_value", "target": px(1, 1), "text": "a"}, "ack", "invalid_action"},
		{map[string]any{"verb": "key", "keys": "ctrl+no-such-key"}, "ack", "invalid_action"},
		{map[string]any{"verb": "launch_app", "app": "no-such-app"}, "ack", "no_such_app"},
		{map[string]any{"verb": "activate_window", "window_id": 987654321}, "ack", "no_such_window"},
		{map[string]any{"verb": "activate_window", "app": "no window has this title"}, "ack", "no_such_window"},
		{map[string]any{"verb": "screenshot", "scope": "window:987654321"}, "ack", "no_such_window"},
		{map[string]any{"verb": "start_screencast", "scope": "window:0x3ade68b1"}, "ack", "no_such_window"},
		{map[string]any{"verb": "observe", "structured": false}, "ack", "invalid_action"},
		{map[string]any{"verb": "screenshot", "observe": map[string]any{}}, "ack", "invalid_action"},
		{map[string]any{"verb": "exec", "argv": []string{"true"}, "observe": map[string]any{}}, "result", "invalid_action"},
		{map[string]any{"verb": "exec", "argv": []string{"true"}, "pty": true}, "result", "invalid_action"},
		{map[string]any{"verb": "exec", "argv": []string{"true"}, "shell": "true"}, "result", "invalid_action"},
		{map[string]any{"verb": "exec"}, "result", "invalid_action"},
		{map[string]any{"verb": "clipboard_get", "text": 5}, "result", "invalid_action"},
		{map[string]any{"verb": "start_screencast", "fps": 31}, "ack", "invalid_action"},
		{map[string]any{"verb": "screenshot", "format": "webp"}, "ack", "invalid_action"},
		{map[string]any{"verb": "fly"}, "ack", "invalid_action"},
	} {
		id := "e" + strconv.Itoa(i)
		r := w.do(id, tc.action)
		if r.M.Type != tc.typ || r.M.OK == nil || *r.M.OK || errCode(r.M.Error) != tc.code {
			t.Errorf("%v: got %s, want %s ok=false %s", tc.action, r, tc.typ, tc.code)
		}
	}
	if err := w.ping(ctxT(t, 10*time.Second), 9); err != nil {
		t.Fatal(err)
	}
}

// TestObserveAfterAct sends every mutating verb with observe and checks the
// ack comes first, then exactly one observation with cause = the call_id.
func TestObserveAfterAct(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	o := w.do("obs", map[string]any{"verb": "observe"})
	var entry, button string
	for _, e := range o.M.Elements {
		switch e.Role + "/" + e.Name {
		case "text/Email":
			entry = e.Ref
		case "push button/Submit":
			button = e.Ref
		}
	}
	ws := listWindows(t, w, "lw")
	spec := map[string]any{"scope": "screen", "format": "jpeg", "quality": 40, "max_long_edge": 300}
	for i, a := range []map[string]any{
		{"verb": "click", "target": px(10, 10)},
		{"verb": "double_click", "target": px(10, 10)},
		{"verb": "right_click", "target": px(10, 10)},
		{"verb": "move", "target": px(20, 20)},
		{"verb": "drag", "target": px(20, 20), "to": px(30, 30)},
		{"verb": "mouse_down", "target": px(40, 700)},
		{"verb": "mouse_up", "target": px(40, 700)},
		{"verb": "scroll", "target": px(10, 10), "dy": 1},
		{"verb": "type_text", "text": "t"},
		{"verb": "key", "keys": "Tab"},
		{"verb": "invoke_action", "target": ref(button)},
		{"verb": "set_value", "target": ref(entry), "text": "a@b"},
		{"verb": "clipboard_set", "text": "c"},
		{"verb": "launch_app", "app": "form"},
		{"verb": "activate_window", "window_id": ws[0].ID},
	} {
		id := "m" + strconv.Itoa(i)
		a["observe"] = spec
		w.act(id, a)
		ctx := ctxT(t, 20*time.Second)
		first, err := w.take(ctx, func(f *frame) bool { return f.id() == id })
		if err != nil {
			t.Fatalf("%s: %v", a["verb"], err)
		}
		mustOK(t, first, "ack")
		obs, err := w.take(ctx, func(f *frame) bool { return f.id() == id })
		if err != nil {
			t.Fatalf("%s: no observation after the ack: %v", a["verb"], err)
		}
		if obs.M.Type != "observation" || obs.M.Image == nil || obs.M.Image.Format != "jpeg" || obs.M.Display == nil ||
			max(obs.M.Image.W, obs.M.Image.H) != 300 || obs.M.FrameHash == "" {
			t.Errorf("%s: observe-after-act %s", a["verb"], obs)
		}
	}
	if err := w.ping(ctxT(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	for _, f := range w.snapshot() {
		if f.M.Type != "pong" {
			t.Errorf("unexpected extra message: %s", f)
		}
	}
}

// TestObserveAfterActCaptureFails asks for an observation of a window that
// does not exist after a click that succeeds. The ack promises "a fresh
// observation with cause = the action's call_id"; when it cannot come, the
// client must be told in-band (an ok=false ack, or an error with that
// cause), not left waiting for an observation that never arrives.
func TestObserveAfterActCaptureFails(t *testing.T) {
	t.Parallel() // it waits for what may never come
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	w.act("c1", map[string]any{"verb": "click", "target": px(5, 5), "observe": map[string]any{"scope": "window:987654321"}})
	a := w.mustReply("c1")
	if a.M.Type != "ack" {
		t.Fatalf("reply %s", a)
	}
	if a.M.OK != nil && !*a.M.OK {
		return // refused up front: the client knows
	}
	ctx := ctxT(t, 5*time.Second)
	f, err := w.take(ctx, func(f *frame) bool { return f.id() == "c1" })
	if err != nil {
		t.Fatalf("click acked ok=true with observe, then nothing with cause c1 within 5 s (%v): "+
			"the observation the ack promises never comes and nothing says why", err)
	}
	if f.M.Type != "observation" && (f.M.OK == nil || *f.M.OK) {
		t.Errorf("after the ack: %s, want the observation or an ok=false reply saying why", f)
	}
}

// TestStreamedExecRefusalShape fills the connection's exec slots with
// streamed execs, then asks for one more. A streamed exec is answered with
// an ack (then exec_output/exec_exit); its refusal must be an ok=false ack,
// the shape the client waits for, not a result.
func TestStreamedExecRefusalShape(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	n := 0
	for ; n < 64; n++ {
		id := "s" + strconv.Itoa(n)
		r := w.do(id, map[string]any{"verb": "exec", "argv": []string{"sleep", "30"}, "stream": true, "timeout_ms": 20000})
		if r.M.OK != nil && !*r.M.OK {
			if errCode(r.M.Error) != "too_many_execs" {
				t.Fatalf("refusal %s, want too_many_execs", r)
			}
			if r.M.Type != "ack" {
				t.Errorf("streamed exec %s refused with a %s: %s; the streamed form's reply is an ack", id, r.M.Type, r)
			}
			break
		}
	}
	if n == 64 {
		t.Fatalf("64 concurrent streamed execs on one connection and no too_many_execs")
	}
	// The buffered form's refusal is a result.
	mustFail(t, w.do("b", map[string]any{"verb": "exec", "argv": []string{"true"}}), "result", "too_many_execs")
}

// TestScreencastResume checks resume_stream: after a session ends, a new
// one that names its stream gets the same stream id with seq continuing and
// a keyframe first; an unknown id gets a fresh stream at seq 0; and a
// stream still owned by a live session cannot be taken over.
func TestScreencastResume(t *testing.T) {
	d := startDaemon(t)
	isFrame := func(f *frame) bool { return f.M.Type == "observation" && f.M.Stream != "" }
	a, _ := dialWire(t, d, nil)
	mustOK(t, a.do("cast", map[string]any{"verb": "start_screencast", "fps": 20, "max_long_edge": 64}), "ack")
	ctx := ctxT(t, 30*time.Second)
	var stream string
	last := uint64(0)
	for i := range 3 {
		if i > 0 {
			mustOK(t, a.do(fmt.Sprintf("t%d", i), map[string]any{"verb": "type_text", "text": "r"}), "ack")
		}
		f, err := a.take(ctx, isFrame)
		if err != nil {
			t.Fatal(err)
		}
		stream, last = f.M.Stream, *f.M.Seq
	}
	// A graceful close: the daemon has let go of the stream once its
	// close frame is back.
	a.ws.Close(websocket.StatusNormalClosure, "bye")
	<-a.done
	for _, f := range a.snapshot() {
		if isFrame(f) && *f.M.Seq > last {
			last = *f.M.Seq
		}
	}

	b, _ := dialWire(t, d, nil)
	mustOK(t, b.do("resume", map[string]any{"verb": "start_screencast", "fps": 20, "max_long_edge": 64, "resume_stream": stream}), "ack")
	f, err := b.take(ctx, isFrame)
	if err != nil {
		t.Fatal(err)
	}
	if f.M.Stream != stream || *f.M.Seq <= last || f.M.Image == nil {
		t.Errorf("resumed frame: stream %q seq %d image %v, want stream %q, seq after %d, a keyframe", f.M.Stream, *f.M.Seq, f.M.Image != nil, stream, last)
	}

	// Another session cannot take b's live stream.
	c, _ := dialWire(t, d, nil)
	mustOK(t, c.do("steal", map[string]any{"verb": "start_screencast", "fps": 20, "max_long_edge": 64, "resume_stream": stream}), "ack")
	g, err := c.take(ctx, isFrame)
	if err != nil {
		t.Fatal(err)
	}
	if g.M.Stream == stream || *g.M.Seq != 0 {
		t.Errorf("a second session resumed a live stream: %s", g)
	}
	mustOK(t, b.do("change", map[string]any{"verb": "type_text", "text": "s"}), "ack")
	if h, err := b.take(ctx, func(f *frame) bool { return isFrame(f) && f.N > 0 }); err != nil || h.M.Stream != stream {
		t.Errorf("the stream's owner stopped getting its frames: %v %v", h, err)
	}

	// An unknown id starts afresh.
	e, _ := dialWire(t, d, nil)
	mustOK(t, e.do("fresh", map[string]any{"verb": "start_screencast", "fps": 20, "max_long_edge": 64, "resume_stream": "no-such-stream"}), "ack")
	h, err := e.take(ctx, isFrame)
	if err != nil {
		t.Fatal(err)
	}
	if h.M.Stream == "no-such-stream" || *h.M.Seq != 0 || h.M.Image == nil {
		t.Errorf("resume of an unknown stream: %s, want a new id at seq 0 with a keyframe", h)
	}
}

// TestScreencastDeltaComposite composites a delta stream's tiles onto its
// keyframes, client side, and checks that after each change the result
// matches a fresh lossless screenshot at the same size pixel for pixel.
func TestScreencastDeltaComposite(t *testing.T) {
	d := startDaemon(t)
	for _, bin := range []bool{false, true} {
		t.Run(fmt.Sprintf("binary=%v", bin), func(t *testing.T) {
			w, _ := dialWire(t, d, &helloOpts{binary: bin})
			mustOK(t, w.do("cast", map[string]any{"verb": "start_screencast", "fps": 20, "max_long_edge": 640, "delta": true}), "ack")
			var comp *image.RGBA
			tiles := 0
			apply := func(f *frame) {
				if f.M.Image != nil {
					comp = toRGBA(decodeShot(t, f))
					return
				}
				if comp == nil {
					t.Fatalf("tiles before any keyframe: %s", f)
				}
				for i, tl := range f.M.Tiles {
					var b []byte
					if f.Binary {
						b = f.Payload[*tl.Off : *tl.Off+*tl.Len]
					} else {
						b, _ = base64.StdEncoding.DecodeString(*tl.Ref)
					}
					img, _, err := image.Decode(bytes.NewReader(b))
					if err != nil {
						t.Fatalf("tile %d: %v", i, err)
					}
					r := image.Rect(tl.X, tl.Y, tl.X+tl.W, tl.Y+tl.H)
					if !r.In(comp.Rect) {
						t.Errorf("tile %v outside the %v keyframe", r, comp.Rect)
					}
					draw.Draw(comp, r, img, img.Bounds().Min, draw.Src)
					tiles++
				}
			}
			ctx := ctxT(t, 60*time.Second)
			for i, change := range []map[string]any{
				{"verb": "type_text", "text": "delta"},
				{"verb": "key", "keys": "BackSpace"},
				{"verb": "type_text", "text": "\nline two"},
				{"verb": "move", "target": px(3, 3)},
				{"verb": "click", "target": px(150, 150)},
			} {
				mustOK(t, w.do(fmt.Sprintf("c%d", i), change), "ack")
				want := toRGBA(decodeShot(t, w.do(fmt.Sprintf("s%d", i), map[string]any{"verb": "screenshot", "max_long_edge": 640})))
				for comp == nil || !bytes.Equal(comp.Pix, want.Pix) {
					f, err := w.take(ctx, func(f *frame) bool { return f.M.Stream != "" })
					if err != nil {
						t.Fatalf("after change %d the composite never matched the screenshot: %v", i, err)
					}
					apply(f)
				}
			}
			if tiles == 0 {
				t.Errorf("a delta stream sent no tiles for small changes")
			}
			mustOK(t, w.do("uncast", map[string]any{"verb": "stop_screencast"}), "ack")
		})
	}
}

func toRGBA(img image.Image) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(out, out.Rect, img, img.Bounds().Min, draw.Src)
	return out
}

// TestExecOutputBudgets checks honest truncation: a buffered exec keeps at
// most its per-channel budget (1 MiB by default), as valid UTF-8, and says
// so per channel; a streamed exec delivers exactly its total budget (64 MiB
// by default) in chunks of at most 32 KiB and says so in exec_exit.
func TestExecOutputBudgets(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, &helloOpts{binary: true})
	var er struct {
		ExitCode        *int   `json:"exit_code"`
		Stdout          string `json:"stdout"`
		Stderr          string `json:"stderr"`
		StdoutTruncated bool   `json:"stdout_truncated"`
		StderrTruncated bool   `json:"stderr_truncated"`
	}
	r := w.do("out", map[string]any{"verb": "exec", "shell": "yes é | head -c 3000000"})
	mustOK(t, r, "result")
	json.Unmarshal(r.M.Value, &er)
	if !er.StdoutTruncated || er.StderrTruncated || len(er.Stdout) > 1<<20 || len(er.Stdout) < 1<<20-3 ||
		!utf8.ValidString(er.Stdout) || strings.ContainsRune(er.Stdout, utf8.RuneError) {
		t.Errorf("stdout over budget: %d bytes, truncated %v/%v, valid %v", len(er.Stdout), er.StdoutTruncated, er.StderrTruncated, utf8.ValidString(er.Stdout))
	}
	r = w.do("err", map[string]any{"verb": "exec", "shell": "yes x | head -c 2000000 >&2; echo ok"})
	er.StdoutTruncated, er.StderrTruncated = false, false
	json.Unmarshal(r.M.Value, &er)
	if er.StdoutTruncated || !er.StderrTruncated || er.Stdout != "ok\n" || len(er.Stderr) != 1<<20 {
		t.Errorf("stderr over budget: %d bytes, truncated %v/%v, stdout %q", len(er.Stderr), er.StdoutTruncated, er.StderrTruncated, er.Stdout)
	}

	mustOK(t, w.do("big", map[string]any{"verb": "exec", "argv": []string{"head", "-c", "70000000", "/dev/zero"}, "stream": true}), "ack")
	ctx := ctxT(t, 60*time.Second)
	total, next := 0, uint64(0)
	for {
		f, err := w.take(ctx, func(f *frame) bool { return f.M.Cause == "big" })
		if err != nil {
			t.Fatalf("after %d bytes: %v", total, err)
		}
		if f.M.Type == "exec_exit" {
			if f.M.Truncated == nil || !*f.M.Truncated || string(f.M.ExitCode) != "0" {
				t.Errorf("exec_exit %s, want truncated and exit 0", f)
			}
			break
		}
		if *f.M.Seq != next || f.M.Data.Len > 32<<10 {
			t.Errorf("chunk seq %d (want %d), %d bytes", *f.M.Seq, next, f.M.Data.Len)
		}
		next++
		total += f.M.Data.Len
	}
	if total != 64<<20 {
		t.Errorf("a streamed exec delivered %d bytes, want its 64 MiB budget exactly", total)
	}
}

// TestClipboardSizeCap puts 15 MiB of text on the clipboard. The schema
// says clipboard_get is "size-capped runtime-side": the set or the get
// must be refused with too_large rather than move the whole text.
func TestClipboardSizeCap(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	big := strings.Repeat("é", 15<<19) // 15 MiB
	set := w.do("set", map[string]any{"verb": "clipboard_set", "text": big})
	if set.M.OK != nil && !*set.M.OK {
		mustFail(t, set, "ack", "too_large")
		return
	}
	get := w.do("get", map[string]any{"verb": "clipboard_get"})
	if get.M.OK != nil && *get.M.OK {
		t.Errorf("clipboard_set and clipboard_get both took %d MiB of text: no runtime-side cap", len(big)>>20)
		return
	}
	mustFail(t, get, "result", "too_large")
}

// TestPingEcho checks that a pong echoes t exactly, and that a ping
// without t gets a pong without t.
func TestPingEcho(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	for _, v := range []float64{0, -1.5, 1e308, 5e-324, 123456789.123456789, 9007199254740993, -1e-300} {
		if err := w.ping(ctxT(t, 10*time.Second), v); err != nil {
			t.Errorf("t=%g: %v", v, err)
		}
	}
	w.send(`{"type":"ping"}`)
	f, err := w.next(ctxT(t, 10*time.Second))
	if err != nil || f.M.Type != "pong" || f.has("t") {
		t.Errorf("ping without t: %v %v", f, err)
	}
}

// TestHugeDurationsClamped sends durations the schema allows but no clock
// does. The runtime clamps them (drag duration_ms to its cap, wait ms to
// its cap, exec timeout_ms to its hard maximum); they must never wrap
// around into tiny or negative durations.
func TestHugeDurationsClamped(t *testing.T) {
	d := startDaemon(t)
	// 534955578137577 ms (about 17,000 years, an integer a float64 holds
	// exactly) is 3136 ns past 29·2^64 ns: multiplied into a
	// time.Duration, it wraps to 3 µs.
	const wraps = "534955578137577"
	t.Run("exec timeout_ms", func(t *testing.T) {
		w, _ := dialWire(t, d, nil)
		w.send(`{"type":"action","call_id":"x","action":{"verb":"exec","argv":["sleep","0.5"],"timeout_ms":` + wraps + `}}`)
		r := w.mustReply("x")
		mustOK(t, r, "result")
		var er struct {
			ExitCode *int `json:"exit_code"`
			TimedOut bool `json:"timed_out"`
		}
		json.Unmarshal(r.M.Value, &er)
		if er.TimedOut || er.ExitCode == nil || *er.ExitCode != 0 {
			t.Errorf("sleep 0.5 with timeout_ms %s: %s, want exit 0 (the timeout clamped to the hard maximum)", wraps, r.M.Value)
		}
	})
	t.Run("wait ms", func(t *testing.T) {
		// A wait past MaxWait is refused, naming the bound, at once.
		w, _ := dialWire(t, d, nil)
		w.send(`{"type":"action","call_id":"x","action":{"verb":"wait","ms":` + wraps + `}}`)
		r := w.mustReply("x")
		if !strings.Contains(string(r.Raw), "invalid_action") || !strings.Contains(string(r.Raw), "MaxWait") {
			t.Errorf("a wait of %s ms answered %s, want invalid_action naming MaxWait", wraps, r.Raw)
		}
	})
	for _, tc := range []struct{ name, action string }{
		{"drag duration_ms", `{"verb":"drag","target":{"kind":"point_px","x":5,"y":5},"to":{"kind":"point_px","x":50,"y":50},"duration_ms":` + wraps + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := dialWire(t, d, nil)
			w.send(`{"type":"action","call_id":"x","action":` + tc.action + `}`)
			// Clamped, it lasts the runtime's cap (10 s or more); wrapped,
			// it is over at once.
			ctx := ctxT(t, 1500*time.Millisecond)
			if r, err := w.reply(ctx, "x"); err == nil {
				t.Errorf("%s answered at once (%s): the duration wrapped instead of being clamped", tc.action, r)
			}
			w.ws.CloseNow() // cancels it
		})
	}
}

// TestSchemaValidValuesAccepted sends values the schema accepts that a Go
// decoder may balk at: integers written as 10.0 or 1e1 (JSON Schema counts
// them as integers), and a window:<id> scope whose id has more digits than
// 64 bits hold (the pattern allows any). None may be refused as malformed:
// a window id no window has is no_such_window. (Integers past 2^53 are left
// out: I-JSON does not promise them.)
func TestSchemaValidValuesAccepted(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	for i, tc := range []struct {
		action   string
		typ      string // reply type when it succeeds
		failCode string // or the failure it must get, if not ok
	}{
		{`{"verb":"wait","ms":10.0}`, "ack", ""},
		{`{"verb":"wait","ms":1e1}`, "ack", ""},
		{`{"verb":"screenshot","format":"jpeg","quality":5e1,"max_long_edge":64}`, "observation", ""},
		{`{"verb":"screenshot","scope":"window:99999999999999999999"}`, "ack", "no_such_window"},
		{`{"verb":"start_screencast","scope":"window:0x1ffffffffffffffff"}`, "ack", "no_such_window"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			id := "v" + strconv.Itoa(i)
			msg := `{"type":"action","call_id":"` + id + `","action":` + tc.action + `}`
			schematest.Valid(t, "", []byte(msg))
			w.send(msg)
			r := w.mustReply(id)
			if tc.failCode != "" {
				mustFail(t, r, tc.typ, tc.failCode)
				return
			}
			mustOK(t, r, tc.typ)
		})
	}
}

// TestElementRefsNeverReused closes a window whose elements were observed:
// their refs answer stale_element_ref from then on, and the refs of a new
// window are fresh numbers, never the old ones again.
func TestElementRefsNeverReused(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	o := w.do("o1", map[string]any{"verb": "observe"})
	old := map[string]bool{}
	maxRef, submit := 0, ""
	for _, e := range o.M.Elements {
		old[e.Ref] = true
		n, _ := strconv.Atoi(e.Ref[1:])
		maxRef = max(maxRef, n)
		if e.Name == "Submit" {
			submit = e.Ref
		}
	}
	mustFail(t, w.do("noaction", map[string]any{"verb": "invoke_action", "target": ref(submit), "text": "toggle"}), "ack", "no_such_action")
	mustOK(t, w.do("close", map[string]any{"verb": "key", "keys": "alt+F4"}), "ack")
	mustOK(t, w.do("o2", map[string]any{"verb": "observe", "scope": "screen"}), "observation")
	mustFail(t, w.do("stale", map[string]any{"verb": "invoke_action", "target": ref(submit)}), "ack", "stale_element_ref")
	mustFail(t, w.do("stale2", map[string]any{"verb": "click", "target": ref(submit)}), "ack", "stale_element_ref")
	mustOK(t, w.do("launch", map[string]any{"verb": "launch_app", "app": "form"}), "ack")
	o3 := w.do("o3", map[string]any{"verb": "observe"})
	for _, e := range o3.M.Elements {
		n, _ := strconv.Atoi(e.Ref[1:])
		if e.Role != "frame" && n <= maxRef {
			t.Errorf("the new form's %s %q got ref %s, at or below the closed form's highest e%d", e.Role, e.Name, e.Ref, maxRef)
		}
	}
}

// TestObserveDiffBaseline checks the diff rendering's edges: a first
// observe with diff falls back to the full tree (no diff_of), an unchanged
// UI renders as a diff that says so, and elements stay the full list.
func TestObserveDiffBaseline(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	o1 := w.do("o1", map[string]any{"verb": "observe", "diff": true})
	mustOK(t, o1, "observation")
	if o1.M.Tree != "full" || o1.has("diff_of") || o1.M.Revision != 1 {
		t.Errorf("first observe with diff: tree %q diff_of %d revision %d, want full, none, 1", o1.M.Tree, o1.M.DiffOf, o1.M.Revision)
	}
	o2 := w.do("o2", map[string]any{"verb": "observe", "diff": true})
	if o2.M.Tree != "diff" || o2.M.DiffOf != 1 || o2.M.Revision != 2 || o2.M.TreeText == "" {
		t.Errorf("unchanged observe with diff: tree %q diff_of %d revision %d text %q", o2.M.Tree, o2.M.DiffOf, o2.M.Revision, o2.M.TreeText)
	}
	if len(o2.M.Elements) != len(o1.M.Elements) || *o2.M.NodeCount != len(o2.M.Elements) {
		t.Errorf("a diff observation must carry the full element list: %d then %d", len(o1.M.Elements), len(o2.M.Elements))
	}
	o3 := w.do("o3", map[string]any{"verb": "observe"})
	if o3.M.Tree != "full" || o3.has("diff_of") || o3.M.Revision != 3 {
		t.Errorf("observe without diff: tree %q diff_of %d revision %d", o3.M.Tree, o3.M.DiffOf, o3.M.Revision)
	}
	// Revisions are per session.
	w2, _ := dialWire(t, d, nil)
	if o := w2.do("o1", map[string]any{"verb": "observe"}); o.M.Revision != 1 {
		t.Errorf("a new session's first revision is %d", o.M.Revision)
	}
}

// TestTypeTextUnicode types non-ASCII text, and text that starts like a
// flag, into an entry found by its element ref, then reads it back from the
// tree; ctrl+a and BackSpace clear it again.
func TestTypeTextUnicode(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	email := func(id string) element {
		t.Helper()
		o := w.do(id, map[string]any{"verb": "observe"})
		for _, e := range o.M.Elements {
			if e.Role == "text" && e.Name == "Email" {
				return e
			}
		}
		t.Fatalf("no Email entry in %s", o.M.TreeText)
		return element{}
	}
	e := email("o1")
	mustOK(t, w.do("focus", map[string]any{"verb": "click", "target": ref(e.Ref)}), "ack")
	const text = "-rf é世界 👋 \"quoted\" \\ tab"
	mustOK(t, w.do("type", map[string]any{"verb": "type_text", "text": text}), "ack")
	if got := email("o2").Value; got != text {
		t.Errorf("typed %q, the entry holds %q", text, got)
	}
	mustOK(t, w.do("clear", map[string]any{"verb": "key", "keys": "ctrl+a BackSpace"}), "ack")
	if got := email("o3").Value; got != "" {
		t.Errorf("after ctrl+a BackSpace the entry holds %q", got)
	}
}

// TestExecStdinEnvCwd checks the exec levers: stdin is written then
// closed, env merges over the daemon's, cwd is honoured, argv is never
// parsed by a shell.
func TestExecStdinEnvCwd(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	dir := t.TempDir()
	r := w.do("x", map[string]any{"verb": "exec", "shell": `cat; printf '|%s|%s' "$WIRE_A" "$(pwd)"`,
		"stdin": "héllo\n", "env": map[string]any{"WIRE_A": "a b;c"}, "cwd": dir})
	mustOK(t, r, "result")
	var er struct{ Stdout string }
	json.Unmarshal(r.M.Value, &er)
	if want := "héllo\n|a b;c|" + dir; er.Stdout != want {
		t.Errorf("stdout %q, want %q", er.Stdout, want)
	}
	r = w.do("argv", map[string]any{"verb": "exec", "argv": []string{"echo", "$HOME", ";", "`id`", "-n"}})
	json.Unmarshal(r.M.Value, &er)
	if er.Stdout != "$HOME ; `id` -n\n" {
		t.Errorf("argv went through a shell: %q", er.Stdout)
	}
}
