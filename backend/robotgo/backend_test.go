//go:build robotgo

package robotgo

import (
	"context"
	"errors"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/internal/keysym"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

func TestOpenWithoutDisplay(t *testing.T) {
	for _, display := range []string{"", ":4093"} {
		t.Setenv("DISPLAY", display)
		_, err := Open(ctxT(t), nil)
		if !errors.Is(err, ErrNoDisplay) {
			t.Errorf("DISPLAY=%q: Open: err = %v, want ErrNoDisplay", display, err)
		}
	}
}

func TestDisplay(t *testing.T) {
	session(t, &xvfb.Options{Width: 800, Height: 600, NoWM: true})
	b := open(t)
	d, err := b.Display(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	// Xvfb's screen is 96 dpi give or take the rounding of its size in
	// millimetres, which robotgo reports as a scale of 1.0-something.
	if want := (shinken.Display{W: 800, H: 600, DPR: 1}); d != want {
		t.Errorf("Display = %+v, want %+v", d, want)
	}
	if b.Platform() != aci.PlatformLinux {
		t.Errorf("Platform = %q", b.Platform())
	}
	o, err := Open(ctxT(t), &Options{DPR: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if d, _ := o.Display(ctxT(t)); d.DPR != 2 || d.W != 800 {
		t.Errorf("with Options.DPR 2: Display = %+v", d)
	}
}

// TestCapturePixels paints windows of known colours where the server itself
// fills them, and checks that a capture finds each colour where it is.
func TestCapturePixels(t *testing.T) {
	session(t, &xvfb.Options{Width: 800, Height: 600, NoWM: true})
	b := open(t)
	c := newClient(t)
	red, green, blue := color.RGBA{220, 20, 30, 255}, color.RGBA{10, 200, 40, 255}, color.RGBA{5, 15, 250, 255}
	rects := []struct {
		r image.Rectangle
		c color.RGBA
	}{
		{image.Rect(0, 0, 50, 40), red},
		{image.Rect(300, 200, 420, 260), green},
		{image.Rect(760, 570, 800, 600), blue},
	}
	for _, x := range rects {
		c.window(x.r.Min.X, x.r.Min.Y, x.r.Dx(), x.r.Dy(), uint32(x.c.R)<<16|uint32(x.c.G)<<8|uint32(x.c.B), 0)
	}
	f, err := b.Capture(ctxT(t), aci.ScopeScreen)
	if err != nil {
		t.Fatal(err)
	}
	if f.Source != image.Rect(0, 0, 800, 600) || f.Image.Bounds() != f.Source || f.Display.W != 800 {
		t.Fatalf("Source %v, bounds %v, display %+v", f.Source, f.Image.Bounds(), f.Display)
	}
	for _, x := range rects {
		for _, p := range []image.Point{x.r.Min, x.r.Max.Sub(image.Pt(1, 1)), center(x.r)} {
			if got := f.Image.RGBAAt(p.X, p.Y); got != x.c {
				t.Errorf("pixel %v = %v, want %v", p, got, x.c)
			}
		}
		// Just outside: the black root.
		if p := x.r.Min.Sub(image.Pt(1, 1)); p.In(f.Source) && f.Image.RGBAAt(p.X, p.Y) == x.c {
			t.Errorf("pixel %v outside %v has its colour", p, x.r)
		}
	}
	for i := 3; i < len(f.Image.Pix); i += 4 {
		if f.Image.Pix[i] != 0xff {
			t.Fatalf("pixel %d is not opaque", i/4)
		}
	}
	again, err := b.Capture(ctxT(t), aci.ScopeScreen)
	if err != nil {
		t.Fatal(err)
	}
	if again.Image == f.Image || !slices.Equal(again.Image.Pix, f.Image.Pix) {
		t.Error("a second capture is not a new image with the same pixels")
	}
}

// TestGrabOffScreen captures a rectangle that overhangs the screen's
// top-left corner: what lies outside the screen is zero, the rest opaque.
func TestGrabOffScreen(t *testing.T) {
	session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	b := open(t)
	c := newClient(t)
	c.window(0, 0, 20, 20, 0xff8000, 0)
	img, err := b.grab(ctxT(t), image.Rect(-10, -5, 30, 25), image.Rect(0, 0, 320, 240))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 40, 30) {
		t.Fatalf("bounds %v", img.Bounds())
	}
	if got := img.RGBAAt(5, 3); got != (color.RGBA{}) {
		t.Errorf("off-screen pixel = %v, want zero", got)
	}
	if got := img.RGBAAt(10, 5); got != (color.RGBA{0xff, 0x80, 0, 0xff}) {
		t.Errorf("screen pixel (0,0) = %v", got)
	}
	if got := img.RGBAAt(35, 28); got != (color.RGBA{0, 0, 0, 0xff}) {
		t.Errorf("screen pixel (25,23) = %v, want the black root", got)
	}
	all, err := b.grab(ctxT(t), image.Rect(-50, -50, -10, -10), image.Rect(0, 0, 320, 240))
	if err != nil || all.Bounds().Dx() != 40 || slices.ContainsFunc(all.Pix, func(v byte) bool { return v != 0 }) {
		t.Errorf("a rectangle wholly off screen: %v, %v", all.Bounds(), err)
	}
}

func TestCaptureScopes(t *testing.T) {
	session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	b := open(t)
	for _, scope := range []aci.Scope{aci.ScopeActiveWindow, aci.WindowScope(0x400001)} {
		if _, err := b.Capture(ctxT(t), scope); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Capture(%s) on X11: err = %v, want ErrUnsupported", scope, err)
		}
	}
	if _, err := b.Capture(ctxT(t), "window:nope"); !errors.Is(err, aci.ErrInvalidAction) {
		t.Errorf("Capture of a malformed scope: err = %v", err)
	}
}

// TestPointerEvents checks what an application receives: each button where
// the pointer was sent, and wheel notches in the directions of the
// contract.
func TestPointerEvents(t *testing.T) {
	session(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true})
	b := open(t)
	c := newClient(t)
	c.window(0, 0, 640, 480, 0x202020, xproto.EventMaskButtonPress|xproto.EventMaskButtonRelease)
	ctx := ctxT(t)
	press := func(what string) xproto.ButtonPressEvent {
		t.Helper()
		return c.next(what, func(ev xgb.Event) bool { _, ok := ev.(xproto.ButtonPressEvent); return ok }).(xproto.ButtonPressEvent)
	}
	for _, tc := range []struct {
		button shinken.Button
		detail xproto.Button
		at     image.Point
	}{{shinken.ButtonLeft, 1, image.Pt(100, 200)}, {shinken.ButtonMiddle, 2, image.Pt(0, 0)}, {shinken.ButtonRight, 3, image.Pt(639, 479)}} {
		c.Drain()
		for _, kind := range []shinken.PointerKind{shinken.PointerDown, shinken.PointerUp} {
			if err := b.Pointer(ctx, shinken.PointerEvent{Kind: kind, X: tc.at.X, Y: tc.at.Y, Button: tc.button}); err != nil {
				t.Fatal(err)
			}
		}
		ev := press("button press")
		if ev.Detail != tc.detail || int(ev.RootX) != tc.at.X || int(ev.RootY) != tc.at.Y {
			t.Errorf("button %d at %v: got button %d at (%d,%d)", tc.button, tc.at, ev.Detail, ev.RootX, ev.RootY)
		}
		rel := c.next("button release", func(ev xgb.Event) bool { _, ok := ev.(xproto.ButtonReleaseEvent); return ok }).(xproto.ButtonReleaseEvent)
		if rel.Detail != tc.detail {
			t.Errorf("button %d released as %d", tc.button, rel.Detail)
		}
	}
	// X11 wheel buttons: 4 up, 5 down, 6 left, 7 right.
	for _, tc := range []struct {
		dx, dy int
		button xproto.Button
	}{{0, 2, 5}, {0, -1, 4}, {3, 0, 7}, {-1, 0, 6}} {
		c.Drain()
		if err := b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: 50, Y: 60, DX: tc.dx, DY: tc.dy}); err != nil {
			t.Fatal(err)
		}
		for range max(tc.dx, -tc.dx, tc.dy, -tc.dy) {
			if ev := press("wheel notch"); ev.Detail != tc.button || ev.RootX != 50 || ev.RootY != 60 {
				t.Errorf("scroll (%d,%d): button %d at (%d,%d), want button %d at (50,60)", tc.dx, tc.dy, ev.Detail, ev.RootX, ev.RootY, tc.button)
			}
		}
	}
	if err := b.Pointer(ctx, shinken.PointerEvent{Kind: 9}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Errorf("unknown pointer kind: err = %v", err)
	}
	if err := b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, Button: 7}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Errorf("unknown button: err = %v", err)
	}
}

// keyClient is a client with a focused window that records key presses.
func keyClient(t *testing.T) (*Backend, *client) {
	session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	b := open(t)
	c := newClient(t)
	w := c.window(0, 0, 320, 240, 0, xproto.EventMaskKeyPress|xproto.EventMaskKeyRelease)
	if err := xproto.SetInputFocusChecked(c.conn, xproto.InputFocusPointerRoot, w, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatal(err)
	}
	return b, c
}

// pressed returns the keysyms (first column of the keyboard map) of the
// next n key presses.
func (c *client) pressed(n int) []xproto.Keysym {
	c.t.Helper()
	var got []xproto.Keysym
	for range n {
		ev := c.next("key press", func(ev xgb.Event) bool { _, ok := ev.(xproto.KeyPressEvent); return ok }).(xproto.KeyPressEvent)
		// Read the map after the press: typing may have remapped the key.
		got = append(got, c.Keymap(c.t)[ev.Detail][0])
	}
	return got
}

const (
	xkShiftL   = 0xffe1
	xkControlL = 0xffe3
	xkReturn   = 0xff0d
	xkTab      = 0xff09
	xkBackSp   = 0xff08
	xkLeft     = 0xff51
	xkF1       = 0xffbe
	xkSuperL   = 0xffeb
)

func TestKeyEvents(t *testing.T) {
	b, c := keyClient(t)
	ctx := ctxT(t)
	keys := func(names ...string) {
		t.Helper()
		for _, k := range names {
			if err := b.Key(ctx, shinken.KeyEvent{Key: k, Down: true}); err != nil {
				t.Fatalf("pressing %s: %v", k, err)
			}
		}
		for _, k := range slices.Backward(names) {
			if err := b.Key(ctx, shinken.KeyEvent{Key: k}); err != nil {
				t.Fatalf("releasing %s: %v", k, err)
			}
		}
	}
	for _, tc := range []struct {
		keys []string
		want []xproto.Keysym
	}{
		{[]string{"a"}, []xproto.Keysym{'a'}},
		{[]string{"7"}, []xproto.Keysym{'7'}},
		{[]string{"A"}, []xproto.Keysym{xkShiftL, 'a'}},
		{[]string{"Shift_L", "Q"}, []xproto.Keysym{xkShiftL, 'q'}}, // no second shift
		{[]string{"Shift_L", "!"}, []xproto.Keysym{xkShiftL, '1'}},
		{[]string{"Control_L", "a"}, []xproto.Keysym{xkControlL, 'a'}},
		{[]string{"Return"}, []xproto.Keysym{xkReturn}},
		{[]string{"BackSpace"}, []xproto.Keysym{xkBackSp}},
		{[]string{"Left"}, []xproto.Keysym{xkLeft}},
		{[]string{"F1"}, []xproto.Keysym{xkF1}},
		{[]string{"Super_L"}, []xproto.Keysym{xkSuperL}},
		{[]string{"space"}, []xproto.Keysym{' '}},
		{[]string{" "}, []xproto.Keysym{' '}},
		{[]string{"é"}, []xproto.Keysym{0xe9}}, // typed: Latin-1 keysym
		{[]string{"✓"}, []xproto.Keysym{0x1002713}},
	} {
		c.Drain()
		keys(tc.keys...)
		if got := c.pressed(len(tc.want)); !slices.Equal(got, tc.want) {
			t.Errorf("keys %q pressed keysyms %#x, want %#x", tc.keys, got, tc.want)
		}
	}
	// A name no keyboard has is invalid, as on every backend; a real key
	// robotgo cannot press is unsupported.
	for _, k := range []string{"NoSuchKey", "\x01", "ab"} {
		if err := b.Key(ctx, shinken.KeyEvent{Key: k, Down: true}); !errors.Is(err, aci.ErrInvalidAction) {
			t.Errorf("key %q: err = %v, want ErrInvalidAction", k, err)
		}
	}
	if err := b.Key(ctx, shinken.KeyEvent{Key: "KP_Add", Down: true}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("key KP_Add: err = %v, want ErrUnsupported", err)
	}
	// Every named key either presses or fails, and none ends the process.
	for name := range keyNames {
		for _, down := range []bool{true, false} {
			if err := b.Key(ctx, shinken.KeyEvent{Key: name, Down: down}); err != nil && !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, ErrX) {
				t.Errorf("key %s: %v", name, err)
			}
		}
	}
}

func TestType(t *testing.T) {
	b, c := keyClient(t)
	ctx := ctxT(t)
	c.Drain()
	if err := b.Type(ctx, "Ab\r\n\tü"); err != nil {
		t.Fatal(err)
	}
	want := []xproto.Keysym{xkShiftL, 'a', 'b', xkReturn, xkTab, 0xfc}
	if got := c.pressed(len(want)); !slices.Equal(got, want) {
		t.Errorf("typed keysyms %#x, want %#x", got, want)
	}
	for _, text := range []string{"ok 😀", "bell\a", "\xff"} {
		c.Drain()
		err := b.Type(ctx, text)
		if !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, aci.ErrInvalidAction) {
			t.Errorf("Type(%q): err = %v, want unsupported or invalid", text, err)
		}
		xproto.GetInputFocus(c.conn).Reply()
		if ev, ok := c.Pending(); ok {
			t.Errorf("Type(%q) failed but typed: %v", text, ev)
		}
	}
}

// TestTypeLateReader: a client that handles the keys once the typing is
// over, as a loaded toolkit does, reads each character beyond ASCII as it
// was typed. Each has a keycode of its own (a repeated one the same),
// kept until Close, which empties them.
func TestTypeLateReader(t *testing.T) {
	b, c := keyClient(t)
	ctx := ctxT(t)
	c.Drain()
	if err := b.Type(ctx, "½Ωé日½ok✓"); err != nil {
		t.Fatal(err)
	}
	want := []xproto.Keysym{0xbd, 0x10003a9, 0xe9, 0x10065e5, 0xbd, 'o', 'k', 0x1002713}
	codes := make([]xproto.Keycode, len(want))
	for i := range codes {
		ev := c.next("key press", func(ev xgb.Event) bool { _, ok := ev.(xproto.KeyPressEvent); return ok })
		codes[i] = ev.(xproto.KeyPressEvent).Detail
	}
	km := c.Keymap(t) // read once every key was typed
	got := make([]xproto.Keysym, len(codes))
	for i, kc := range codes {
		got[i] = km[kc][0]
	}
	if !slices.Equal(got, want) {
		t.Errorf("read late, the keys are %#x, want %#x", got, want)
	}
	if codes[0] != codes[4] {
		t.Errorf("½ was typed on keycodes %d and %d, want the same one", codes[0], codes[4])
	}
	b.Close()
	km = c.Keymap(t)
	for _, i := range []int{0, 1, 2, 3, 7} {
		if km[codes[i]][0] != 0 {
			t.Errorf("after Close keycode %d still maps %#x", codes[i], km[codes[i]][0])
		}
	}
}

// TestCloseReleases presses a button and a key, closes the backend, and
// checks that the server sees neither held; then every method fails with
// ErrClosed.
func TestCloseReleases(t *testing.T) {
	session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	b, err := Open(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := newClient(t)
	ctx := ctxT(t)
	if err := b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, X: 10, Y: 10}); err != nil {
		t.Fatal(err)
	}
	if err := b.Key(ctx, shinken.KeyEvent{Key: "Control_L", Down: true}); err != nil {
		t.Fatal(err)
	}
	held := func() (bool, bool) {
		p, err := xproto.QueryPointer(c.conn, c.root).Reply()
		if err != nil {
			t.Fatal(err)
		}
		return p.Mask&xproto.KeyButMaskButton1 != 0, p.Mask&xproto.KeyButMaskControl != 0
	}
	if button, ctrl := held(); !button || !ctrl {
		t.Fatalf("before Close: button held %v, control held %v", button, ctrl)
	}
	b.Close()
	if button, ctrl := held(); button || ctrl {
		t.Errorf("after Close: button held %v, control held %v", button, ctrl)
	}
	if _, err := b.Capture(ctx, aci.ScopeScreen); !errors.Is(err, aci.ErrClosed) {
		t.Errorf("Capture after Close: %v", err)
	}
	if err := b.Type(ctx, "x"); !errors.Is(err, aci.ErrClosed) {
		t.Errorf("Type after Close: %v", err)
	}
}

// TestNoLeaks runs every kind of call many times and checks that the
// process holds no more file descriptors than before (robotgo's X11 window
// functions would open one connection per call), and that the clipboard
// leaves at most one xclip running.
func TestNoLeaks(t *testing.T) {
	srv := session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	before := fds(t)
	b, err := Open(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	clip, err := b.Clipboard()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := b.Capture(ctx, aci.ScopeScreen); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []shinken.PointerKind{shinken.PointerMove, shinken.PointerDown, shinken.PointerUp} {
			if err := b.Pointer(ctx, shinken.PointerEvent{Kind: kind, X: i, Y: i}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.PointerPosition(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Type(ctx, "aé"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Display(ctx); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if err := clip.SetClipboardText(ctx, strings.Repeat("x", i+1)); err != nil {
				t.Fatal(err)
			}
			if _, err := clip.ClipboardText(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.Close()
	if after := fds(t); after != before {
		t.Errorf("%d file descriptors open before, %d after", before, after)
	}
	// Each xclip that set the clipboard ends when the next one takes it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := countPrograms(t, srv, "xclip")
		if n <= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d xclip processes still run", n)
		}
		time.Sleep(10 * time.Millisecond) // waiting for processes to exit
	}
}

// countPrograms counts the session's processes running program.
func countPrograms(t *testing.T, srv *xvfb.Server, program string) int {
	pids, err := srv.Processes()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pid := range pids {
		comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == program {
			n++
		}
	}
	return n
}

func TestClipboard(t *testing.T) {
	session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	b := open(t)
	ctx := ctxT(t)
	clip, err := b.Clipboard()
	if err != nil {
		t.Fatal(err)
	}
	// A fresh session's clipboard has no owner.
	if got, err := clip.ClipboardText(ctx); got != "" || err != nil {
		t.Errorf("empty clipboard: %q, %v", got, err)
	}
	for _, text := range []string{"plain", "日本 ✓ é\nsecond line\n"} {
		if err := clip.SetClipboardText(ctx, text); err != nil {
			t.Fatal(err)
		}
		if got, err := clip.ClipboardText(ctx); got != text || err != nil {
			t.Errorf("clipboard holds %q, %v; want %q", got, err, text)
		}
	}
	if err := clip.SetClipboardText(ctx, ""); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("setting an empty clipboard: err = %v, want ErrUnsupported", err)
	}
	if _, ok := b.Desktop().(shinken.Clipboard); !ok {
		t.Error("Desktop() does not offer the clipboard where xclip is installed")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := clip.ClipboardText(done); err == nil {
		t.Error("ClipboardText with a done context succeeded")
	}
}

// center is the middle of r.
func center(r image.Rectangle) image.Point {
	return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
}

// TestPointerUnits runs the pointer through a fake two-pixel unit, as on a
// Retina Mac: robotgo (and so the X server) gets half the coordinates, and
// PointerPosition answers in pixels, exactly while the pointer stays in the
// unit it was sent to.
func TestPointerUnits(t *testing.T) {
	session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	b := open(t)
	b.unit = 2
	c := newClient(t)
	ctx := ctxT(t)
	if err := b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerMove, X: 101, Y: 201}); err != nil {
		t.Fatal(err)
	}
	p, err := xproto.QueryPointer(c.conn, c.root).Reply()
	if err != nil {
		t.Fatal(err)
	}
	if p.RootX != 50 || p.RootY != 100 {
		t.Errorf("pixel (101,201) at unit 2 put the pointer at (%d,%d), want (50,100)", p.RootX, p.RootY)
	}
	if got, err := b.PointerPosition(ctx); got != image.Pt(101, 201) || err != nil {
		t.Errorf("PointerPosition = %v, %v; want the pixel sent to", got, err)
	}
	xproto.WarpPointer(c.conn, 0, c.root, 0, 0, 0, 0, 10, 7)
	xproto.GetInputFocus(c.conn).Reply()
	if got, err := b.PointerPosition(ctx); got != image.Pt(20, 14) || err != nil {
		t.Errorf("after another client moved the pointer: PointerPosition = %v, %v; want (20,14)", got, err)
	}
	if d, _ := b.Display(ctx); d.W != 640 || d.H != 480 {
		t.Errorf("Display at unit 2 = %+v, want 640×480", d)
	}
}

// TestWelcome checks what a Runtime serving Desktop advertises: input,
// screenshots and the clipboard, and none of the verbs robotgo cannot do.
func TestWelcome(t *testing.T) {
	session(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true})
	b := open(t)
	rt := shinken.NewRuntime(b.Desktop(), nil)
	defer rt.Close()
	caps := rt.Capabilities()
	for _, v := range []aci.Verb{aci.VerbClick, aci.VerbTypeText, aci.VerbKey, aci.VerbScroll,
		aci.VerbScreenshot, aci.VerbClipboardGet, aci.VerbClipboardSet} {
		if !slices.Contains(caps.Verbs, v) {
			t.Errorf("the welcome lacks %s: %v", v, caps.Verbs)
		}
	}
	for _, v := range []aci.Verb{aci.VerbObserve, aci.VerbInvokeAction, aci.VerbLaunchApp, aci.VerbActivateWindow} {
		if slices.Contains(caps.Verbs, v) {
			t.Errorf("the welcome advertises %s", v)
		}
	}
	if slices.Contains(caps.Targets, aci.TargetElementRef) {
		t.Error("the welcome advertises element_ref targets")
	}
}

// TestKeyNamesKnown checks that every key robotgo presses is a name of the
// vocabulary the other backends take, so none is refused as unknown.
func TestKeyNamesKnown(t *testing.T) {
	for name := range keyNames {
		if _, ok := keysym.Lookup(name); !ok {
			t.Errorf("robotgo presses %q, which internal/keysym does not know", name)
		}
	}
}
