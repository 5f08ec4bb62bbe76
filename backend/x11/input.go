package x11

import (
	"context"
	"errors"
	"fmt"
	"image"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Input goes through XTest. Events are sent without waiting for the server
// after each one: the server handles a connection's requests in order, so
// anything this backend does next (a capture, a query) sees their effect,
// and other clients receive them asynchronously whatever we do.

func (b *Backend) inputReady(ctx context.Context) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	if !b.xtest {
		return fmt.Errorf("%w: %w", ErrNoXTest, errors.ErrUnsupported)
	}
	return nil
}

// buttonState remembers the buttons held down, to release them at Close.
type buttonState struct {
	mu   sync.Mutex
	held map[byte]bool
}

// minPressGap is the least time, by the server's clock, between a button
// press and the input before it. X servers stamp events in milliseconds
// and toolkits compare presses by those stamps: GTK does not count a
// third press stamped in the second's millisecond, and Chromium takes a
// press stamped as the one before for that same press again (the second
// press of a double click is then no double click, and selects nothing).
// Spacing presses by our own clock does not hold under load: a busy server
// reads the requests late, and handles those that queued up together
// within one millisecond. So each press carries XTest's delay: the server
// itself waits minPressGap past the last event it handled before it
// handles the press.
const minPressGap = 10 * time.Millisecond

func (s *buttonState) set(button byte, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = make(map[byte]bool)
	}
	if down {
		s.held[button] = true
	} else {
		delete(s.held, button)
	}
}

func (s *buttonState) releaseAll(b *Backend) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for button := range s.held {
		xtest.FakeInput(b.conn, xproto.ButtonRelease, button, 0, b.root, 0, 0, 0)
	}
	clear(s.held)
}

// Pointer moves the pointer, presses or releases a button, or scrolls by
// wheel notches: buttons 4 and 5 scroll up and down, 6 and 7 left and
// right, at most 1000 notches each way per event. The server clamps
// positions to the screen.
func (b *Backend) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	if err := b.inputReady(ctx); err != nil {
		return err
	}
	var button byte
	switch ev.Button {
	case shinken.ButtonLeft:
		button = 1
	case shinken.ButtonMiddle:
		button = 2
	case shinken.ButtonRight:
		button = 3
	default:
		return fmt.Errorf("%w: unknown button %d", aci.ErrInvalidAction, ev.Button)
	}
	x, y := clamp16(ev.X), clamp16(ev.Y)
	b.settle.wmInput.Store(ev.Kind != shinken.PointerMove || b.settle.wmInput.Load())
	xtest.FakeInput(b.conn, xproto.MotionNotify, 0, 0, b.root, x, y, 0)
	switch ev.Kind {
	case shinken.PointerMove:
	case shinken.PointerDown:
		xtest.FakeInput(b.conn, xproto.ButtonPress, button, uint32(minPressGap/time.Millisecond), b.root, 0, 0, 0)
		b.buttons.set(button, true)
	case shinken.PointerUp:
		xtest.FakeInput(b.conn, xproto.ButtonRelease, button, 0, b.root, 0, 0, 0)
		b.buttons.set(button, false)
	case shinken.PointerScroll:
		b.settle.scrolled.Store(true)
		notch := func(button byte, n int) {
			for range min(n, 1000) {
				xtest.FakeInput(b.conn, xproto.ButtonPress, button, 0, b.root, 0, 0, 0)
				xtest.FakeInput(b.conn, xproto.ButtonRelease, button, 0, b.root, 0, 0, 0)
			}
		}
		if ev.DY > 0 {
			notch(5, ev.DY)
		} else {
			notch(4, -ev.DY)
		}
		if ev.DX > 0 {
			notch(7, ev.DX)
		} else {
			notch(6, -ev.DX)
		}
	default:
		return fmt.Errorf("%w: unknown pointer event %d", aci.ErrInvalidAction, ev.Kind)
	}
	return nil
}

func clamp16(v int) int16 {
	return int16(max(-32768, min(32767, v)))
}

// PointerPosition reports where the pointer is on the screen.
func (b *Backend) PointerPosition(ctx context.Context) (image.Point, error) {
	if err := b.check(ctx); err != nil {
		return image.Point{}, err
	}
	r, err := xproto.QueryPointer(b.conn, b.root).Reply()
	if err != nil {
		return image.Point{}, fmt.Errorf("x11: QueryPointer: %w", err)
	}
	return image.Pt(int(r.RootX), int(r.RootY)), nil
}

// Key presses or releases one key by keysym name or character. A
// character on the keyboard's shifted level is pressed with Shift (unless
// a Shift key is already down) and Shift goes up with it; a character the
// keyboard lacks is mapped to a spare keycode for as long as it is held.
func (b *Backend) Key(ctx context.Context, ev shinken.KeyEvent) error {
	if err := b.inputReady(ctx); err != nil {
		return err
	}
	b.settle.wmInput.Store(true) // window managers bind keys
	ks, err := keysymForName(ev.Key)
	if err != nil {
		return err
	}
	k := &b.keyboard
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.load(); err != nil {
		return err
	}
	if !ev.Down {
		h, ok := k.held[ks]
		if !ok {
			// Not pressed through us: release it anyway, harmlessly.
			if p, found := k.pos[ks]; found {
				k.fake(xproto.KeyRelease, p.code)
			}
			return nil
		}
		delete(k.held, ks)
		k.release(h.code)
		if h.addedShift {
			k.release(k.shift)
		}
		if h.spare != nil {
			h.spare.held, h.spare.used = false, time.Now()
		}
		return nil
	}
	if h, ok := k.held[ks]; ok {
		k.fake(xproto.KeyPress, h.code) // pressed again while down: a repeat
		return nil
	}
	var h heldKey
	if p, ok := k.locate(ks, b.capsLock()); ok {
		h.code = p.code
		h.addedShift = p.shift && !k.shiftDown() && k.shift != 0
	} else {
		s, err := k.spareFor(ctx, ks)
		if err != nil {
			return err
		}
		s.held, s.used = true, time.Now()
		h.code, h.spare = s.code, s
	}
	if h.addedShift {
		k.press(k.shift)
	}
	k.press(h.code)
	k.held[ks] = h
	if b.xfixes && copyKey(ks) && k.controlDown() {
		b.clip.promiseCopy()
	}
	return nil
}

// copyKey reports whether ks copies or cuts with Control held: C, X,
// Insert.
func copyKey(ks xproto.Keysym) bool {
	switch ks {
	case 'c', 'C', 'x', 'X', 0xff63:
		return true
	}
	return false
}

// capsLock reports whether Caps Lock is on.
func (b *Backend) capsLock() bool {
	r, err := xproto.QueryPointer(b.conn, b.root).Reply()
	return err == nil && r.Mask&xproto.ModMaskLock != 0
}

// Type types text, any characters: from the keyboard layout when it has
// them (with Shift as needed), else from spare keycodes (emptied at Close).
// Newlines type Return and tabs Tab. A Shift held through Key is let go
// while typing and pressed again after; Type leaves no key of its own down.
func (b *Backend) Type(ctx context.Context, text string) (err error) {
	if err := b.inputReady(ctx); err != nil {
		return err
	}
	syms := make([]xproto.Keysym, 0, len(text))
	for i, r := range text {
		if r == '\n' && i > 0 && text[i-1] == '\r' {
			continue // CR LF is one Return
		}
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(text[i:]); size == 1 {
				return fmt.Errorf("%w: text is not valid UTF-8", aci.ErrInvalidAction)
			}
		}
		ks, ok := runeKeysym(r)
		if !ok {
			return fmt.Errorf("%w: cannot type control character %U", aci.ErrInvalidAction, r)
		}
		syms = append(syms, ks)
	}
	k := &b.keyboard
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.load(); err != nil {
		return err
	}
	caps := b.capsLock()
	// Shift keys held through Key go up for the duration.
	var userShifts []xproto.Keycode
	for code := range k.down {
		if k.shifts[code] {
			userShifts = append(userShifts, code)
			k.fake(xproto.KeyRelease, code)
		}
	}
	shifted := false
	defer func() {
		if shifted {
			k.fake(xproto.KeyRelease, k.shift)
		}
		for _, code := range userShifts {
			k.fake(xproto.KeyPress, code)
		}
		if syncErr := b.sync(); err == nil && syncErr != nil {
			err = fmt.Errorf("x11: typing: %w", syncErr)
		}
	}()
	setShift := func(on bool) {
		if on != shifted && k.shift != 0 {
			if on {
				k.fake(xproto.KeyPress, k.shift)
			} else {
				k.fake(xproto.KeyRelease, k.shift)
			}
			shifted = on
		}
	}
	if err := k.premap(ctx, syms, caps); err != nil {
		return err
	}
	for _, ks := range syms {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p, ok := k.locate(ks, caps); ok {
			setShift(p.shift)
			k.fake(xproto.KeyPress, p.code)
			k.fake(xproto.KeyRelease, p.code)
			continue
		}
		s, err := k.spareFor(ctx, ks)
		if err != nil {
			return err
		}
		setShift(false)
		k.fake(xproto.KeyPress, s.code)
		k.fake(xproto.KeyRelease, s.code)
		s.used = time.Now()
	}
	return nil
}
