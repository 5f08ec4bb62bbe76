package shinken_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"testing"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func captureRGBA(t *testing.T, e *env) *image.RGBA {
	t.Helper()
	f, err := e.desk.Capture(context.Background(), aci.ScopeScreen)
	if err != nil {
		t.Fatal(err)
	}
	return f.Image
}

// TestScreencastDeltasComposite types into a field while a delta screencast
// runs; the frames the client composites must equal a full capture, pixel
// for pixel, and some of them must be tile deltas.
func TestScreencastDeltasComposite(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	for _, text := range []bool{false, true} {
		t.Run(fmt.Sprintf("text=%v", text), func(t *testing.T) {
			c := e.dial(t, &client.DialOptions{TextFrames: text})
			if err := c.LaunchApp(ctx, "form"); err != nil {
				t.Fatal(err)
			}
			sc, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 30, Delta: true})
			if err != nil {
				t.Fatal(err)
			}
			first, err := sc.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !first.Keyframe || first.Seq != 0 {
				t.Fatalf("first frame keyframe=%v seq=%d", first.Keyframe, first.Seq)
			}
			deltas := 0
			for i := range 5 {
				if err := c.TypeText(ctx, fmt.Sprintf("%c", 'a'+i)); err != nil {
					t.Fatal(err)
				}
				want := captureRGBA(t, e)
				for {
					f, err := sc.Next(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if !f.Keyframe {
						deltas++
					}
					if bytes.Equal(f.Image.Pix, want.Pix) {
						break
					}
				}
			}
			if deltas == 0 {
				t.Fatal("no delta frame while typing")
			}
			if err := sc.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestScreencastIdleSendsNothing(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.dial(t, nil)
	sc, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 30, Delta: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Next(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "20 screencast ticks", 20*time.Second, func() bool {
		ticks, _ := shinken.CastStats(e.rt)
		return ticks >= 20
	})
	if _, frames := shinken.CastStats(e.rt); frames != 1 {
		t.Fatalf("%d frames on an idle screen, want just the keyframe", frames)
	}
	sc.Stop(ctx)
}

// TestScreencastResume drops the connection mid-stream: the same stream
// continues on the new connection, seq carrying on.
func TestScreencastResume(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.dial(t, nil)
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	sc, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 30, Delta: true})
	if err != nil {
		t.Fatal(err)
	}
	f0, err := sc.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.TypeText(ctx, "x")
	f1, err := sc.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	c.TypeText(ctx, "y")
	f2, err := sc.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f2.Stream != f0.Stream || f2.Seq <= f1.Seq || !f2.Keyframe {
		t.Fatalf("after resume: stream %s seq %d keyframe %v; before: stream %s seq %d", f2.Stream, f2.Seq, f2.Keyframe, f0.Stream, f1.Seq)
	}
	sc.Stop(ctx)

	// Without resume_stream a new stream starts at seq 0.
	sc2, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 30})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sc2.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.Stream == f0.Stream || g.Seq != 0 {
		t.Fatalf("new stream %s seq %d", g.Stream, g.Seq)
	}
	sc2.Stop(ctx)
}

// TestScreencastResumeFromLiveConnection resumes a stream from a second
// connection while the first, which runs it, is still open, as a client
// does that reconnects before the runtime has seen its old connection end
// (dropped without a close): the stream moves, its seq goes on from a
// keyframe, and the first connection gets no more of its frames.
func TestScreencastResumeFromLiveConnection(t *testing.T) {
	e := newEnv(t, nil)
	typist := e.dial(t, nil)
	if err := typist.LaunchApp(testCtx(t), "notes"); err != nil {
		t.Fatal(err)
	}
	first := e.raw(t, false)
	first.send(`{"type":"action","call_id":"s","action":{"verb":"start_screencast","fps":30}}`)
	var stream string
	var seq uint64
	for stream == "" {
		switch m := first.read().(type) {
		case *aci.Ack:
			if !m.OK {
				t.Fatalf("start: %+v", m)
			}
		case *aci.Observation:
			if m.Stream != "" && m.Seq != nil {
				stream, seq = m.Stream, *m.Seq
			}
		}
	}
	second := e.raw(t, false)
	second.send(`{"type":"action","call_id":"r","action":{"verb":"start_screencast","fps":30,"resume_stream":"` + stream + `"}}`)
	if a, ok := second.read().(*aci.Ack); !ok || !a.OK {
		t.Fatalf("resume: %+v", a)
	}
	m, ok := second.read().(*aci.Observation)
	if !ok || m.Stream != stream || m.Seq == nil || *m.Seq <= seq || m.Image == nil {
		t.Fatalf("the first frame after the resume: %+v (stream %s was at seq %d)", m, stream, seq)
	}
	// The first connection's last frames may still be in flight; then a
	// ping's pong comes after them, and no frame after it.
	first.send(`{"type":"ping","t":1}`)
	for {
		if m := first.read(); m.MessageType() == "pong" {
			break
		}
	}
	if err := typist.TypeText(testCtx(t), "x"); err != nil { // a change to send
		t.Fatal(err)
	}
	if m, ok := second.read().(*aci.Observation); !ok || m.Stream != stream {
		t.Fatalf("the resumed stream after a change: %+v", m)
	}
	first.send(`{"type":"ping","t":2}`)
	if m := first.read(); m.MessageType() != "pong" {
		t.Fatalf("the first connection still gets %s after the resume", m.MessageType())
	}
}

// TestScreencastSlowReader never reads: the runtime's queue stays bounded.
func TestScreencastSlowReader(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{WriteQueue: 4, WriteTimeout: 2 * time.Second})
	r := e.raw(t, true)
	r.send(`{"type":"action","call_id":"s","action":{"verb":"start_screencast","fps":30}}`)
	// Keep the screen busy so every tick has a frame to send.
	ctx := testCtx(t)
	busy := e.dial(t, nil)
	busy.LaunchApp(ctx, "notes")
	for i := range 60 {
		busy.TypeText(ctx, string(rune('a'+i%26)))
		if q := shinken.MaxQueue(e.rt); q > 4 {
			t.Fatalf("queue length %d over its bound", q)
		}
	}
	// The stalled client is eventually disconnected, others go on.
	if err := busy.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	r.ws.CloseNow()
	_ = websocket.StatusNormalClosure
}

func TestScreencastBadParams(t *testing.T) {
	e := newEnv(t, nil)
	r := e.raw(t, false)
	r.send(`{"type":"action","call_id":"s1","action":{"verb":"start_screencast","fps":60}}`)
	if a, ok := r.read().(*aci.Ack); !ok || a.OK {
		t.Fatalf("fps 60 accepted: %+v", a)
	}
	r.send(`{"type":"action","call_id":"s2","action":{"verb":"start_screencast","scope":"window:777"}}`)
	if a, ok := r.read().(*aci.Ack); !ok || a.OK {
		t.Fatalf("bad window accepted: %+v", a)
	}
	// stop: no frame follows its ack.
	r.send(`{"type":"action","call_id":"s3","action":{"verb":"start_screencast","fps":30}}`)
	r.send(`{"type":"action","call_id":"s4","action":{"verb":"stop_screencast"}}`)
	sawStop := false
	for !sawStop {
		switch m := r.read().(type) {
		case *aci.Ack:
			if m.CallID == "s4" {
				sawStop = true
			}
		}
	}
	r.send(`{"type":"ping","t":5}`)
	if m := r.read(); m.MessageType() != "pong" {
		t.Fatalf("a %s followed stop_screencast's ack", m.MessageType())
	}
}

// TestScreencastWindowGone: a window screencast ends when its window
// closes, and frees its slot.
func TestScreencastWindowGone(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{MaxScreencasts: 1})
	ctx := testCtx(t)
	c := e.dial(t, nil)
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	ws, _ := c.ListWindows(ctx)
	sc, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 30, Scope: aci.WindowScope(ws[0].ID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.desk.CloseWindow(ctx, ws[0].ID); err != nil {
		t.Fatal(err)
	}
	// The stream leaves the runtime, which frees its slot.
	waitFor(t, "the window's screencast to end", 10*time.Second, func() bool {
		ticks, _ := shinken.CastStats(e.rt)
		return ticks == 0
	})
}
