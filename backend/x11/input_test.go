package x11

import (
	"context"
	"errors"
	"image"
	"reflect"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestPointerMove moves the pointer and reads it back, through the
// backend and through another client.
func TestPointerMove(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 800, Height: 600, NoWM: true}, nil)
	ctx := ctxT(t)
	for _, p := range []image.Point{{0, 0}, {123, 456}, {799, 599}, {400, 1}} {
		if err := s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerMove, X: p.X, Y: p.Y}); err != nil {
			t.Fatal(err)
		}
		got, err := s.b.PointerPosition(ctx)
		if err != nil || got != p {
			t.Fatalf("PointerPosition after move to %v: %v %v", p, got, err)
		}
		r, err := xproto.QueryPointer(s.client, s.root).Reply()
		if err != nil || int(r.RootX) != p.X || int(r.RootY) != p.Y {
			t.Fatalf("QueryPointer after move to %v: %v,%v %v", p, r.RootX, r.RootY, err)
		}
	}
	// Off-screen targets are clamped by the server to the screen.
	s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerMove, X: -20, Y: 5000})
	if got, _ := s.b.PointerPosition(ctx); got != image.Pt(0, 599) {
		t.Fatalf("clamped position %v", got)
	}
}

// TestPressesSpacedOnABusyServer has the server read a double click's
// requests late and all at once, as a loaded server does: another client
// holds a server grab while the backend sends them. The two presses are
// still stamped minPressGap apart (with the spacing by our own clock, the
// server handled them within one millisecond, and Chromium took the
// second press for the first again).
func TestPressesSpacedOnABusyServer(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 400, Height: 300, NoWM: true}, nil)
	ctx := ctxT(t)
	s.window(windowSpec{r: image.Rect(0, 0, 200, 200), bg: white, override: true,
		events: xproto.EventMaskButtonPress})
	s.x.Drain()
	if err := xproto.GrabServerChecked(s.client).Check(); err != nil {
		t.Fatal(err)
	}
	// Pointer makes no round trip: each request is written before it
	// returns, and waits in the server's queue until the grab ends.
	for range 2 {
		for _, k := range []shinken.PointerKind{shinken.PointerDown, shinken.PointerUp} {
			if err := s.b.Pointer(ctx, shinken.PointerEvent{Kind: k, X: 50, Y: 50, Button: shinken.ButtonLeft}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := xproto.UngrabServerChecked(s.client).Check(); err != nil {
		t.Fatal(err)
	}
	var at []xproto.Timestamp
	for len(at) < 2 {
		e := s.nextEvent("a press", func(e xgb.Event) bool {
			_, ok := e.(xproto.ButtonPressEvent)
			return ok
		})
		at = append(at, e.(xproto.ButtonPressEvent).Time)
	}
	if gap := at[1] - at[0]; gap < xproto.Timestamp(minPressGap/time.Millisecond) || gap > 1<<31 {
		t.Fatalf("the second press is stamped %d ms after the first, want at least %v", int32(gap), minPressGap)
	}
}

// TestPointerButtons presses every button and scrolls every way over a
// window, and checks the events it receives.
func TestPointerButtons(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 800, Height: 600, NoWM: true}, nil)
	ctx := ctxT(t)
	s.window(windowSpec{r: image.Rect(100, 100, 400, 300), bg: white, override: true,
		events: xproto.EventMaskButtonPress | xproto.EventMaskButtonRelease})
	s.x.Drain()
	type ev struct {
		press  bool
		button byte
		x, y   int16
	}
	var pressedAt []xproto.Timestamp
	next := func() ev {
		e := s.nextEvent("a button event", func(e xgb.Event) bool {
			switch e.(type) {
			case xproto.ButtonPressEvent, xproto.ButtonReleaseEvent:
				return true
			}
			return false
		})
		if p, ok := e.(xproto.ButtonPressEvent); ok {
			pressedAt = append(pressedAt, p.Time)
			return ev{true, byte(p.Detail), p.EventX, p.EventY}
		}
		r := e.(xproto.ButtonReleaseEvent)
		return ev{false, byte(r.Detail), r.EventX, r.EventY}
	}
	for _, c := range []struct {
		button shinken.Button
		want   byte
	}{{shinken.ButtonLeft, 1}, {shinken.ButtonMiddle, 2}, {shinken.ButtonRight, 3}} {
		if err := s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, X: 150, Y: 160, Button: c.button}); err != nil {
			t.Fatal(err)
		}
		if err := s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerUp, X: 151, Y: 162, Button: c.button}); err != nil {
			t.Fatal(err)
		}
		if got := next(); got != (ev{true, c.want, 50, 60}) {
			t.Fatalf("press: %+v", got)
		}
		if got := next(); got != (ev{false, c.want, 51, 62}) {
			t.Fatalf("release: %+v", got)
		}
	}
	// Presses sent back to back reach the apps spaced by the server's
	// clock: their millisecond stamps never match (GTK drops a press
	// stamped with the previous one's millisecond, Chromium takes it for
	// the same press), however late a loaded server reads them. The
	// server itself waits minPressGap before each press.
	for i := 1; i < len(pressedAt); i++ {
		if gap := pressedAt[i] - pressedAt[i-1]; gap < xproto.Timestamp(minPressGap/time.Millisecond) || gap > 1<<31 {
			t.Errorf("press %d stamped %d ms after the one before, want at least %v", i, int32(gap), minPressGap)
		}
	}
	for _, c := range []struct {
		dx, dy  int
		buttons []byte
	}{{0, 2, []byte{5, 5}}, {0, -1, []byte{4}}, {3, 0, []byte{7, 7, 7}}, {-1, 0, []byte{6}}, {1, 1, []byte{5, 7}}} {
		if err := s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerScroll, X: 200, Y: 200, DX: c.dx, DY: c.dy}); err != nil {
			t.Fatal(err)
		}
		for _, b := range c.buttons {
			if p, r := next(), next(); p != (ev{true, b, 100, 100}) || r != (ev{false, b, 100, 100}) {
				t.Fatalf("scroll %d,%d: %+v %+v, want button %d", c.dx, c.dy, p, r, b)
			}
		}
	}
	// A button left down is released by Close.
	s.b.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, X: 150, Y: 150, Button: shinken.ButtonLeft})
	s.b.Close()
	waitFor(t, "button released at Close", func() bool {
		r, err := xproto.QueryPointer(s.client, s.root).Reply()
		return err == nil && r.Mask&xproto.ButtonMask1 == 0
	})
	if err := s.b.Pointer(ctx, shinken.PointerEvent{}); !errors.Is(err, aci.ErrClosed) {
		t.Fatalf("Pointer after Close: %v", err)
	}
}

// keyWindow maps a focused window that receives key events.
func (s *session) keyWindow() xproto.Window {
	w := s.window(windowSpec{r: image.Rect(0, 0, 200, 200), bg: white, override: true,
		events: xproto.EventMaskKeyPress | xproto.EventMaskKeyRelease})
	if err := xproto.SetInputFocusChecked(s.client, xproto.InputFocusParent, w, xproto.TimeCurrentTime).Check(); err != nil {
		s.t.Fatal(err)
	}
	s.x.Drain()
	return w
}

type keyEv struct {
	press bool
	code  xproto.Keycode
	state uint16
}

func (s *session) nextKey() keyEv {
	e := s.nextEvent("a key event", func(e xgb.Event) bool {
		switch e.(type) {
		case xproto.KeyPressEvent, xproto.KeyReleaseEvent:
			return true
		}
		return false
	})
	if p, ok := e.(xproto.KeyPressEvent); ok {
		return keyEv{true, p.Detail, p.State}
	}
	r := e.(xproto.KeyReleaseEvent)
	return keyEv{false, r.Detail, r.State}
}

// codeOf returns the keycode whose first level is ks.
func (s *session) codeOf(ks xproto.Keysym) xproto.Keycode {
	for code, syms := range s.x.Keymap(s.t) {
		if syms[0] == ks {
			return code
		}
	}
	s.t.Fatalf("keysym %#x not on the keyboard", ks)
	return 0
}

// TestKeys presses named keys, letters on both levels, a chord and a
// character the keyboard lacks, and checks the events and modifiers.
func TestKeys(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true}, nil)
	ctx := ctxT(t)
	s.keyWindow()
	original := s.x.Keymap(s.t)
	key := func(name string, down bool) {
		t.Helper()
		if err := s.b.Key(ctx, shinken.KeyEvent{Key: name, Down: down}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	a, shift, ctrl, ret := s.codeOf('a'), s.codeOf(0xffe1), s.codeOf(0xffe3), s.codeOf(0xff0d)

	key("a", true)
	key("a", false)
	if p, r := s.nextKey(), s.nextKey(); p != (keyEv{true, a, 0}) || r != (keyEv{false, a, 0}) {
		t.Fatalf("a: %+v %+v", p, r)
	}
	key("Return", true)
	key("Return", false)
	if p, r := s.nextKey(), s.nextKey(); p.code != ret || r.code != ret {
		t.Fatalf("Return: %+v %+v", p, r)
	}
	// "A" needs Shift, which goes down before and up after.
	key("A", true)
	key("A", false)
	want := []keyEv{{true, shift, 0}, {true, a, xproto.ModMaskShift}, {false, a, xproto.ModMaskShift}, {false, shift, xproto.ModMaskShift}}
	for i, w := range want {
		if got := s.nextKey(); got != w {
			t.Fatalf("A event %d: %+v, want %+v", i, got, w)
		}
	}
	// A chord: Control held while c goes down and up.
	key("Control_L", true)
	key("c", true)
	key("c", false)
	key("Control_L", false)
	c := s.codeOf('c')
	want = []keyEv{{true, ctrl, 0}, {true, c, xproto.ModMaskControl}, {false, c, xproto.ModMaskControl}, {false, ctrl, xproto.ModMaskControl}}
	for i, w := range want {
		if got := s.nextKey(); got != w {
			t.Fatalf("ctrl+c event %d: %+v, want %+v", i, got, w)
		}
	}
	// With Shift held by the caller, "A" adds no Shift of its own.
	key("Shift_L", true)
	key("A", true)
	key("A", false)
	key("Shift_L", false)
	want = []keyEv{{true, shift, 0}, {true, a, xproto.ModMaskShift}, {false, a, xproto.ModMaskShift}, {false, shift, xproto.ModMaskShift}}
	for i, w := range want {
		if got := s.nextKey(); got != w {
			t.Fatalf("shift+A event %d: %+v, want %+v", i, got, w)
		}
	}
	// "é" is not on a US keyboard: a spare keycode carries it while held.
	key("é", true)
	p := s.nextKey()
	if !p.press || original[p.code][0] != 0 || s.x.Keymap(s.t)[p.code][0] != 0xe9 {
		t.Fatalf("é press %+v: keycode maps to %#x, was %#x", p, s.x.Keymap(s.t)[p.code], original[p.code])
	}
	key("é", false)
	if r := s.nextKey(); r.press || r.code != p.code {
		t.Fatalf("é release %+v", r)
	}
	// The spare keeps é until Close: a mapping change is an event clients
	// handle in their own time, and a shortcut sent meanwhile is lost.
	if got := s.x.Keymap(s.t)[p.code][0]; got != 0xe9 {
		t.Fatalf("the spare keycode maps to %#x after é's release, want é (0xe9) until Close", got)
	}
	if m := s.modifiers(); m != 0 {
		t.Fatalf("modifiers held: %#x", m)
	}
	if err := s.b.Key(ctx, shinken.KeyEvent{Key: "NoSuchKey", Down: true}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("unknown key: %v", err)
	}
	// Keys held at Close are released.
	key("Shift_L", true)
	key("Control_L", true)
	key("ü", true)
	s.b.Close()
	waitFor(t, "modifiers released at Close", func() bool { return s.modifiers() == 0 })
	waitFor(t, "mapping restored at Close", func() bool { return reflect.DeepEqual(s.x.Keymap(s.t), original) })
}

// TestTypeEvents types mixed text into a bare window and decodes the key
// events the way a client does: with the mapping it refetches after each
// MappingNotify. That only works if no keycode is remapped while events
// for it may still be in flight, which is the point of the spare pool.
func TestTypeEvents(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true}, nil)
	ctx := ctxT(t)
	s.keyWindow()
	original := s.x.Keymap(s.t)
	text := "Hi é\tÉ✓\n日本ßx Wörld ½"
	if err := s.b.Type(ctx, text); err != nil {
		t.Fatal(err)
	}
	keymap := original
	var got []rune
	for len(got) < len([]rune(text)) {
		e := s.nextEvent("a key or mapping event", func(e xgb.Event) bool {
			switch e.(type) {
			case xproto.KeyPressEvent, xproto.MappingNotifyEvent:
				return true
			}
			return false
		})
		if _, ok := e.(xproto.MappingNotifyEvent); ok {
			keymap = s.x.Keymap(s.t)
			continue
		}
		p := e.(xproto.KeyPressEvent)
		syms := keymap[p.Detail]
		ks := syms[0]
		if p.State&xproto.ModMaskShift != 0 {
			if syms[1] != 0 {
				ks = syms[1]
			} else {
				_, ks = caseKeysyms(ks)
			}
		}
		switch {
		case ks == 0xffe1:
			continue
		case ks == 0xff0d:
			got = append(got, '\n')
		case ks == 0xff09:
			got = append(got, '\t')
		default:
			got = append(got, keysymRune(ks))
		}
	}
	if string(got) != text {
		t.Fatalf("typed %q, want %q", string(got), text)
	}
	if m := s.modifiers(); m != 0 {
		t.Fatalf("modifiers held after Type: %#x", m)
	}
	if err := s.b.Type(ctx, "bell\a"); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("control character: %v", err)
	}
	s.b.Close() // the spares keep their characters until then
	waitFor(t, "mapping restored at Close", func() bool { return reflect.DeepEqual(s.x.Keymap(s.t), original) })
}

// TestTypeCancel cancels Type while it waits for a spare keycode, with
// Shift down for the character before, and checks that nothing is left
// held and the mapping comes back.
func TestTypeCancel(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true}, nil)
	s.keyWindow()
	original := s.x.Keymap(s.t)
	spares := len(s.b.keyboard.spares)
	if spares == 0 {
		s.b.keyboard.mu.Lock()
		s.b.keyboard.load()
		spares = len(s.b.keyboard.spares)
		s.b.keyboard.mu.Unlock()
	}
	var text []rune
	for i := range spares {
		text = append(text, rune(0x4e00+i)) // distinct CJK ideographs
	}
	text = append(text, 'B', '☃')
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := s.b.Type(ctx, string(text))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Type with more characters than %d spares and a short deadline: %v", spares, err)
	}
	if m := s.modifiers(); m != 0 {
		t.Fatalf("modifiers held after a cancelled Type: %#x", m)
	}
	s.b.Close() // the spares keep their characters until then
	waitFor(t, "mapping restored at Close", func() bool { return reflect.DeepEqual(s.x.Keymap(s.t), original) })
}
