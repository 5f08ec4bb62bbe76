package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/record"
)

type rect struct{ X, Y, W, H float64 }

// TestInspectorPage opens the page in headless Chromium, watches an agent
// act, outlines an element from the tree, takes over and clicks and types
// Unicode on the canvas (the desktop's state changes), hands back, then
// replays a recording with the scrubber, frame for frame.
func TestInspectorPage(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	d := start(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	agent := dial(t, ctx, d)
	defer agent.Close()

	b := startBrowser(t, d.page)
	b.waitFor(`inspector.frames > 0 && inspector.elements.size > 0`)

	obs, err := agent.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatal(err)
	}
	submit, err := obs.Find("push button", "Submit")
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Click(ctx, aci.Ref(name.Ref)); err != nil {
		t.Fatal(err)
	}
	b.waitFor(`inspector.steps.some((s) => s.verb === "click" && s.ok && s.settle === "sync")`)

	// Hover the Submit line: the overlay outlines its bbox.
	var line rect
	sel := fmt.Sprintf(`document.querySelector('#tree div[data-ref=%q]')`, submit.Ref)
	b.waitFor(sel)
	b.eval(`(() => { const r = `+sel+`.getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &line)
	b.mouse("mouseMoved", line.X+20, line.Y+line.H/2)
	b.waitFor(fmt.Sprintf(`inspector.hover === %q`, submit.Ref))
	var outlined bool
	b.eval(fmt.Sprintf(`(() => { const o = document.getElementById("overlay"), s = o.width / inspector.screen.w;
		const p = o.getContext("2d").getImageData(Math.round((%g + %g / 2) * s), Math.round(%g * s), 1, 1).data;
		return p[3] > 200 && p[0] > 200 && p[2] < 150; })()`, submit.BBox[0], submit.BBox[2], submit.BBox[1]), &outlined)
	if !outlined {
		t.Error("hovering the Submit line drew no outline at its bbox")
	}
	b.click(line.X+20, line.Y+line.H/2)
	var det string
	b.eval(`document.getElementById("details").textContent`, &det)
	if !strings.Contains(det, "role:    push button") || !strings.Contains(det, "ref:     "+submit.Ref) {
		t.Errorf("details of the clicked line:\n%s", det)
	}
	b.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 1, "y": 1}, nil)
	b.eval(`document.getElementById("marks").click()`, nil)
	// Set-of-marks: each interactive element's ref on a purple label at
	// its top-left corner.
	var marked bool
	b.eval(fmt.Sprintf(`(() => { const o = document.getElementById("overlay"), s = o.width / inspector.screen.w;
		const p = o.getContext("2d").getImageData(Math.round(%g * s) + 1, Math.round(%g * s) + 1, 1, 1).data;
		return p[3] > 200 && p[0] > 150 && p[2] > 150 && p[1] < 150; })()`, name.BBox[0], name.BBox[1]), &marked)
	if !marked {
		t.Errorf("the marks draw no label at %s's corner", name.Ref)
	}

	// Take over: the agent is refused, the person's input drives the desktop.
	var take rect
	b.eval(`(() => { const r = document.getElementById("take").getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &take)
	b.click(take.X+take.W/2, take.Y+take.H/2)
	b.waitFor(`inspector.held && inspector.mine`)
	err = agent.Click(ctx, aci.Ref(submit.Ref))
	if !errors.Is(err, aci.ErrPermissionDenied) || !strings.Contains(err.Error(), "held by a person at the page") {
		t.Fatalf("the agent's click while a person holds the input: %v", err)
	}
	var cv rect
	b.eval(`(() => { const r = document.getElementById("screen").getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &cv)
	var sw float64
	b.eval(`inspector.screen.w`, &sw)
	at := func(bbox []float64) (float64, float64) {
		k := (cv.W - 2) / sw
		return cv.X + 1 + (bbox[0]+bbox[2]/2)*k, cv.Y + 1 + (bbox[1]+bbox[3]/2)*k
	}
	// Clear the entry, type in three scripts, submit: all on the canvas.
	b.click(at(name.BBox))
	b.call("Input.dispatchKeyEvent", map[string]any{"type": "rawKeyDown", "key": "a", "modifiers": 2}, nil)
	b.call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "a", "modifiers": 2}, nil)
	b.key("Backspace", false)
	typed := "Ada é✓日本"
	for _, r := range typed {
		b.key(string(r), true)
	}
	// Composed text (an input method's, an emoji picker's) comes whole,
	// with no keydown per character, to the page's editable element.
	b.call("Input.insertText", map[string]any{"text": "語😀"}, nil)
	typed += "語😀"
	// An input method's composition: its text changes as the person
	// types, and only what it commits is typed on the desktop, once.
	b.call("Input.imeSetComposition", map[string]any{"text": "に", "selectionStart": 1, "selectionEnd": 1}, nil)
	b.call("Input.imeSetComposition", map[string]any{"text": "にほん", "selectionStart": 3, "selectionEnd": 3}, nil)
	b.call("Input.insertText", map[string]any{"text": "日本"}, nil)
	typed += "日本"
	b.click(at(submit.BBox))
	// Every click and key was sent (moves are thinned to one per 30 ms)
	// and answered.
	b.waitFor(`inspector.latencies.length >= 16 && inspector.pending.size === 0`)
	obs, err = agent.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if el, _ := obs.Find("text", "Name"); el.Value != typed {
		t.Errorf("the entry holds %q after the person typed %q", el.Value, typed)
	}
	var submitted bool
	for _, e := range obs.Elements {
		if e.Role == "label" && strings.Contains(e.Name, "Submitted: "+typed) {
			submitted = true
		}
	}
	if !submitted {
		t.Errorf("the person's click on Submit did not submit:\n%s", obs.TreeText)
	}
	var lat []float64
	b.eval(`inspector.latencies`, &lat)
	slices.Sort(lat)
	t.Logf("takeover input latency, browser event to input injected (desktop changed): p50 %.2f ms, p90 %.2f ms over %d events",
		lat[len(lat)/2], lat[len(lat)*9/10], len(lat))
	shots := os.Getenv("SHINKEN_PAGE_SHOTS")
	if shots != "" {
		b.screenshot(filepath.Join(shots, "inspector-takeover.png"))
	}
	b.click(take.X+take.W/2, take.Y+take.H/2)
	b.waitFor(`!inspector.held`)
	if err := agent.Click(ctx, aci.Ref(name.Ref)); err != nil {
		t.Errorf("the agent's click after the hand back: %v", err)
	}
	b.waitFor(`inspector.steps.some((s) => s.kind === "takeover")`)
	if shots != "" {
		b.screenshot(filepath.Join(shots, "inspector-live.png"))
	}

	// Replay: a recording of a scripted session shows the same frames at
	// the same timestamps.
	path, times, digests := scriptedRecording(t, dir)
	b.setFile("#file", path)
	b.waitFor(`inspector.replay && inspector.steps.length === ` + fmt.Sprint(len(times)))
	for i, ms := range times {
		var got uint32
		b.eval(fmt.Sprintf(`inspector.replayAt(%d).then(() => {
			const c = document.getElementById("screen"), p = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			let h = 0x811c9dc5;
			for (let i = 0; i < p.length; i++) { h ^= p[i]; h = Math.imul(h, 0x01000193) >>> 0; }
			return h; })`, ms), &got)
		if got != digests[i] {
			t.Errorf("replayed frame %d at %d ms: digest %08x, recorded %08x", i, ms, got, digests[i])
		}
	}
	if shots != "" {
		b.screenshot(filepath.Join(shots, "inspector-replay.png"))
	}
	d.stop(t)
}

// scriptedRecording records a scripted typing session on a fresh headless
// desktop; it returns the file, the times of its frames in milliseconds
// and the FNV-1a digest of each frame's RGBA pixels.
func scriptedRecording(t *testing.T, dir string) (string, []int, []uint32) {
	t.Helper()
	ctx := context.Background()
	desk := headless.New(&headless.Options{Width: 640, Height: 400})
	if err := desk.Launch(ctx, "notes", nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	start := time.Now()
	w := record.NewWriter(&buf, start, &record.WriterOptions{KeyEvery: 700 * time.Millisecond})
	for i, s := range []string{"", "H", "é", "✓", "日", " ", "w"} {
		if s != "" {
			if err := desk.Type(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		f, err := desk.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			t.Fatal(err)
		}
		at := start.Add(time.Duration(i) * 250 * time.Millisecond)
		if err := w.Frame(at, f.Image); err != nil {
			t.Fatal(err)
		}
		w.Event(shinken.Event{Kind: shinken.EventAction, Verb: "type_text", OK: true, Time: at})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "session.rec")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := record.NewPlayer(bytes.NewReader(buf.Bytes()))
	var times []int
	var digests []uint32
	for {
		at, img, err := p.NextFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New32a()
		h.Write(img.Pix)
		times, digests = append(times, int(at/time.Millisecond)), append(digests, h.Sum32())
	}
	return path, times, digests
}
