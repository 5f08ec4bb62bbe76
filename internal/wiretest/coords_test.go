package wiretest

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"math"
	"strconv"
	"testing"
)

type rect struct{ X, Y, W, H int }

// TestCoordinateSpaces takes screenshots over every scope, several
// downscales and both formats, on text and binary sessions, and checks that
// every observation describes the same global action space (the
// screen_size), the captured rectangle (the window's bbox from
// list_windows), and a delivered size that is the image's own, with the
// source's aspect ratio and the requested long edge.
func TestCoordinateSpaces(t *testing.T) {
	d := startDaemon(t)
	for _, bin := range []bool{false, true} {
		t.Run(fmt.Sprintf("binary=%v", bin), func(t *testing.T) {
			w, welcome := dialWire(t, d, &helloOpts{binary: bin})
			capEdge := welcomeOf(t, welcome).MaxLongEdge
			sw, sh := screenSize(t, w, "size")
			ws := listWindows(t, w, "windows")
			var active windowInfo
			for _, win := range ws {
				if *win.Active {
					active = win
				}
			}
			bboxRect := func(b []int) rect { return rect{b[0], b[1], b[2], b[3]} }
			scopes := []struct {
				scope string // "" = omitted
				src   rect
			}{
				{"", rect{0, 0, sw, sh}},
				{"screen", rect{0, 0, sw, sh}},
				{"active_window", bboxRect(active.BBox)},
			}
			for _, win := range ws {
				scopes = append(scopes,
					struct {
						scope string
						src   rect
					}{"window:" + strconv.FormatUint(win.ID, 10), bboxRect(win.BBox)},
					struct {
						scope string
						src   rect
					}{"window:0x" + strconv.FormatUint(win.ID, 16), bboxRect(win.BBox)})
			}
			n := 0
			for _, sc := range scopes {
				for _, edge := range []int{0, 640, 333, 5000, 1} {
					hashes := map[string]string{}
					for _, format := range []string{"png", "jpeg"} {
						n++
						id := fmt.Sprintf("c%d", n)
						a := map[string]any{"verb": "screenshot", "format": format}
						if sc.scope != "" {
							a["scope"] = sc.scope
						}
						if edge > 0 {
							a["max_long_edge"] = edge
						}
						f := w.do(id, a)
						mustOK(t, f, "observation")
						what := fmt.Sprintf("scope %q edge %d %s", sc.scope, edge, format)
						checkSpace(t, what, f, sw, sh, sc.src, edge, capEdge)
						hashes[format] = f.M.FrameHash
					}
					if hashes["png"] != hashes["jpeg"] {
						t.Errorf("scope %q edge %d: png hash %s, jpeg hash %s: frame_hash must not depend on the codec",
							sc.scope, edge, hashes["png"], hashes["jpeg"])
					}
				}
			}
			// Screencast frames and observe-after-act use the same space.
			mustOK(t, w.do("cast", map[string]any{"verb": "start_screencast", "scope": "active_window", "max_long_edge": 200}), "ack")
			fr, err := w.take(ctxT(t, 10e9), func(f *frame) bool { return f.M.Stream != "" })
			if err != nil {
				t.Fatal(err)
			}
			checkSpace(t, "screencast frame", fr, sw, sh, bboxRect(active.BBox), 200, capEdge)
			mustOK(t, w.do("uncast", map[string]any{"verb": "stop_screencast"}), "ack")
			w.drop(func(f *frame) bool { return f.M.Stream != "" })
			w.act("mv", map[string]any{"verb": "move", "target": px(1, 1), "observe": map[string]any{"max_long_edge": 100}})
			mustOK(t, w.mustReply("mv"), "ack")
			oa, err := w.take(ctxT(t, 10e9), func(f *frame) bool { return f.id() == "mv" })
			if err != nil {
				t.Fatal(err)
			}
			checkSpace(t, "observe-after-act", oa, sw, sh, rect{0, 0, sw, sh}, 100, capEdge)
		})
	}
}

// checkSpace checks one observation's coordinate space.
func checkSpace(t *testing.T, what string, f *frame, sw, sh int, src rect, edge, capEdge int) {
	t.Helper()
	ds := f.M.Display
	if ds == nil || f.M.Image == nil {
		t.Errorf("%s: no display or image: %s", what, f)
		return
	}
	if ds.Origin != "top-left" || ds.W != sw || ds.H != sh || !(ds.DPR > 0) {
		t.Errorf("%s: display %+v, want top-left %dx%d, dpr > 0 (the screen_size)", what, *ds, sw, sh)
	}
	got := rect{ds.SourceRect.X, ds.SourceRect.Y, ds.SourceRect.W, ds.SourceRect.H}
	if got != src {
		t.Errorf("%s: source_rect %+v, want %+v", what, got, src)
	}
	dw, dh := ds.Delivered.W, ds.Delivered.H
	limit := capEdge
	if edge > 0 {
		limit = min(limit, edge)
	}
	wantLong := min(max(src.W, src.H), limit)
	if max(dw, dh) != wantLong {
		t.Errorf("%s: delivered %dx%d, want a long edge of %d (source %dx%d)", what, dw, dh, wantLong, src.W, src.H)
	}
	if dw < 1 || dh < 1 {
		t.Errorf("%s: delivered %dx%d", what, dw, dh)
	}
	// The aspect ratio survives the downscale, up to rounding of the
	// short edge.
	if dw > 1 && dh > 1 {
		short := float64(min(src.W, src.H)) * float64(wantLong) / float64(max(src.W, src.H))
		if math.Abs(float64(min(dw, dh))-short) > 1 {
			t.Errorf("%s: delivered %dx%d does not keep the %dx%d source's aspect ratio", what, dw, dh, src.W, src.H)
		}
	}
}

// TestWindowPixelsAtSourceRect checks that a window capture's pixels are
// the screen's pixels at its source_rect, so the rectangle tells the truth.
func TestWindowPixelsAtSourceRect(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, &helloOpts{binary: true})
	screen := decodeShot(t, w.do("s", map[string]any{"verb": "screenshot"}))
	for _, win := range listWindows(t, w, "lw") {
		f := w.do("w"+strconv.FormatUint(win.ID, 10), map[string]any{"verb": "screenshot", "scope": "window:" + strconv.FormatUint(win.ID, 10)})
		img := decodeShot(t, f)
		sr := f.M.Display.SourceRect
		want := image.NewRGBA(image.Rect(0, 0, sr.W, sr.H))
		draw.Draw(want, want.Rect, screen, image.Pt(sr.X, sr.Y), draw.Src)
		got := image.NewRGBA(img.Bounds())
		draw.Draw(got, got.Rect, img, img.Bounds().Min, draw.Src)
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("window %d: its pixels differ from the screen's at source_rect %+v", win.ID, sr)
		}
	}
}

func decodeShot(t *testing.T, f *frame) image.Image {
	t.Helper()
	b, err := f.imageBytes()
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestPointerMetadata moves the pointer with both target kinds and checks
// the pointer the next screenshot reports, in global action pixels.
func TestPointerMetadata(t *testing.T) {
	d := startDaemon(t, "-size", "1000x500")
	w, _ := dialWire(t, d, nil)
	for i, tc := range []struct {
		target map[string]any
		x, y   int
	}{
		{px(10, 20), 10, 20},
		{px(999, 499), 999, 499},
		{map[string]any{"kind": "point_norm", "x": 0.5, "y": 0.5}, 500, 250},
		{map[string]any{"kind": "point_norm", "x": 1, "y": 1}, 999, 499},
		{map[string]any{"kind": "point_norm", "x": 0, "y": 0}, 0, 0},
		{px(12.4, 12.6), 12, 13},
	} {
		mustOK(t, w.do(fmt.Sprintf("m%d", i), map[string]any{"verb": "move", "target": tc.target}), "ack")
		f := w.do(fmt.Sprintf("s%d", i), map[string]any{"verb": "screenshot", "max_long_edge": 50})
		if len(f.M.Pointer) != 2 || f.M.Pointer[0] != tc.x || f.M.Pointer[1] != tc.y {
			t.Errorf("after a move to %v the screenshot says pointer %v, want [%d %d]", tc.target, f.M.Pointer, tc.x, tc.y)
		}
	}
}

// TestFrameHash checks frame_hash: the same screen gives the same hash
// (whatever the codec, session framing or repeat), a change gives a new
// one, a return to the same pixels gives the old one back, and a different
// delivered size gives a different hash.
func TestFrameHash(t *testing.T) {
	d := startDaemon(t)
	tw, _ := dialWire(t, d, nil)
	bw, _ := dialWire(t, d, &helloOpts{binary: true})
	n := 0
	hash := func(w *wire, a map[string]any) string {
		t.Helper()
		n++
		a["verb"] = "screenshot"
		f := w.do(fmt.Sprintf("h%d", n), a)
		if f.M.FrameHash == "" {
			t.Fatalf("no frame_hash: %s", f)
		}
		return f.M.FrameHash
	}
	h0 := hash(tw, map[string]any{})
	for _, a := range []map[string]any{
		{}, {"format": "jpeg"}, {"format": "jpeg", "quality": 1}, {"max_long_edge": 5000}, {"scope": "screen"},
	} {
		if h := hash(tw, a); h != h0 {
			t.Errorf("text session %v: hash %s, want %s (same screen)", a, h, h0)
		}
		if h := hash(bw, a); h != h0 {
			t.Errorf("binary session %v: hash %s, want %s (same screen)", a, h, h0)
		}
	}
	h640 := hash(tw, map[string]any{"max_long_edge": 640})
	h320 := hash(tw, map[string]any{"max_long_edge": 320})
	if h640 == h0 || h320 == h0 || h640 == h320 {
		t.Errorf("different delivered sizes share a hash: full %s, 640 %s, 320 %s", h0, h640, h320)
	}
	if h := hash(bw, map[string]any{"max_long_edge": 640}); h != h640 {
		t.Errorf("640 twice: %s then %s", h640, h)
	}
	win := hash(tw, map[string]any{"scope": "active_window"})
	if win == h0 {
		t.Errorf("a window capture has the screen's hash")
	}

	// A change, then its undoing.
	mustOK(t, tw.do("type", map[string]any{"verb": "type_text", "text": "x"}), "ack")
	h1 := hash(tw, map[string]any{})
	if h1 == h0 {
		t.Errorf("typing changed nothing in the hash")
	}
	nm := tw.do("nm", map[string]any{"verb": "screenshot", "if_none_match": h0})
	if nm.M.NotModified != nil || nm.M.Image == nil {
		t.Errorf("if_none_match with the hash before the change must get the image: %s", nm)
	}
	mustOK(t, tw.do("undo", map[string]any{"verb": "key", "keys": "BackSpace"}), "ack")
	if h := hash(tw, map[string]any{}); h != h0 {
		t.Errorf("the screen is back to its first pixels but the hash is %s, not %s", h, h0)
	}
	// A hash from a downscaled frame never matches a full one.
	full := tw.do("cross", map[string]any{"verb": "screenshot", "if_none_match": h640})
	if full.M.Image == nil {
		t.Errorf("if_none_match from a 640 px frame matched a full-size one: %s", full)
	}
	if nm := tw.do("same", map[string]any{"verb": "screenshot", "max_long_edge": 640, "if_none_match": h640}); nm.M.NotModified == nil {
		t.Errorf("if_none_match at the same size and pixels: %s, want not_modified", nm)
	}
}

// TestOffscreenWindowSpace drags a window half off the screen's left edge:
// its capture keeps the whole window's size, source_rect starts at a
// negative x (the list_windows bbox), the off-screen part is blank, and
// the global action space is unchanged.
func TestOffscreenWindowSpace(t *testing.T) {
	d := startDaemon(t)
	w, _ := dialWire(t, d, nil)
	sw, sh := screenSize(t, w, "size")
	var form windowInfo
	for _, win := range listWindows(t, w, "lw1") {
		if win.Title == "Form" {
			form = win
		}
	}
	if form.ID == 0 {
		t.Fatal("no Form window")
	}
	// Grab the title bar a third of the way in, left of the close box,
	// and drop it at the screen's left edge.
	grab := px(float64(form.BBox[0]+form.BBox[2]/3), float64(form.BBox[1]+8))
	to := px(0, float64(form.BBox[1]+8))
	mustOK(t, w.do("drag", map[string]any{"verb": "drag", "target": grab, "to": to}), "ack")
	var moved windowInfo
	for _, win := range listWindows(t, w, "lw2") {
		if win.ID == form.ID {
			moved = win
		}
	}
	if moved.BBox[0] >= 0 {
		t.Fatalf("the drag did not move the window off the left edge: %v -> %v", form.BBox, moved.BBox)
	}
	f := w.do("shot", map[string]any{"verb": "screenshot", "scope": "window:" + strconv.FormatUint(form.ID, 10)})
	mustOK(t, f, "observation")
	checkSpace(t, "off-screen window", f, sw, sh, rect{moved.BBox[0], moved.BBox[1], moved.BBox[2], moved.BBox[3]}, 0, 4096)
	img := toRGBA(decodeShot(t, f))
	off := -moved.BBox[0]
	for y := 0; y < img.Rect.Dy(); y += 17 {
		for x := 0; x < off; x += 13 {
			if c := img.RGBAAt(x, y); c.R|c.G|c.B != 0 {
				t.Fatalf("pixel (%d, %d), off screen, is %v, want blank", x, y, c)
			}
		}
	}
}
