//go:build robotgo

package robotgo

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-vgo/robotgo"

	"shinken.dev/go/internal/keysym"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// buttonNames are robotgo's names for the pointer buttons.
var buttonNames = [...]string{
	shinken.ButtonLeft:   "left",
	shinken.ButtonMiddle: "center",
	shinken.ButtonRight:  "right",
}

// keyNames maps X keysym names, as the core normalises keys, to robotgo's
// key names. Keys robotgo names wrongly on X11 are left out, so they fail
// as unsupported instead of pressing another key: its keypad operators
// (KP_Add is the keysym of "N" there), KP_Enter and KP_Equal.
var keyNames = map[string]string{
	"Control_L": "lctrl", "Control_R": "rctrl",
	"Shift_L": "lshift", "Shift_R": "rshift",
	"Alt_L": "lalt", "Alt_R": "ralt",
	"Super_L": "lcmd", "Super_R": "rcmd",
	"Return": "enter", "Tab": "tab", "Escape": "esc", "BackSpace": "backspace",
	"Delete": "delete", "Insert": "insert", "Home": "home", "End": "end",
	"Page_Up": "pageup", "Page_Down": "pagedown", "Prior": "pageup", "Next": "pagedown",
	"Left": "left", "Up": "up", "Right": "right", "Down": "down",
	"space": "space", "Caps_Lock": "capslock", "Print": "printscreen", "Menu": "menu",
	"Num_Lock": "num_lock", "KP_Decimal": "num.",
	"XF86AudioMute": "audio_mute", "XF86AudioLowerVolume": "audio_vol_down",
	"XF86AudioRaiseVolume": "audio_vol_up", "XF86AudioPlay": "audio_play",
	"XF86AudioStop": "audio_stop", "XF86AudioPause": "audio_pause",
	"XF86AudioPrev": "audio_prev", "XF86AudioNext": "audio_next",
}

func init() {
	for i := 1; i <= 24; i++ {
		keyNames["F"+strconv.Itoa(i)] = "f" + strconv.Itoa(i)
	}
	for i := 0; i <= 9; i++ {
		keyNames["KP_"+strconv.Itoa(i)] = "num" + strconv.Itoa(i)
	}
}

// typeChunk is how many characters one call to robotgo's typing function
// gets, so that ctx is checked while a long text is typed.
const typeChunk = 32

// held is what a Backend pressed and has not released.
type held struct {
	buttons [len(buttonNames)]bool
	keys    map[string]keyPress // by shinken key name
}

// keyPress is how one key was pressed through robotgo: by its robotgo
// name. For capitals and shifted symbols ("A", "!") robotgo holds shift
// itself while the key is down.
type keyPress struct {
	name string
}

// releaseAll releases every held button and key. The caller holds
// robotgoMu.
func (h *held) releaseAll() {
	for i, down := range h.buttons {
		if down {
			robotgo.Toggle(buttonNames[i], "up")
			h.buttons[i] = false
		}
	}
	for k, kp := range h.keys {
		kp.toggle(false)
		delete(h.keys, k)
	}
	takeXError()
}

// shiftHeld reports whether a shift key is held through this Backend.
func (h *held) shiftHeld() bool {
	_, l := h.keys["Shift_L"]
	_, r := h.keys["Shift_R"]
	return l || r
}

// toggle presses or releases kp.
func (kp keyPress) toggle(down bool) error {
	if down {
		return robotgo.KeyToggle(kp.name)
	}
	return robotgo.KeyToggle(kp.name, "up")
}

// minPressGap is the least time between two button presses.
const minPressGap = 10 * time.Millisecond

// Pointer implements [shinken.Injector]. Coordinates are device pixels;
// on macOS, where robotgo moves by points, a move lands on the point that
// holds the pixel.
func (b *Backend) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	if ev.Kind > shinken.PointerScroll {
		return fmt.Errorf("%w: pointer event kind %d", aci.ErrInvalidAction, ev.Kind)
	}
	if int(ev.Button) >= len(buttonNames) {
		return fmt.Errorf("%w: pointer button %d", aci.ErrInvalidAction, ev.Button)
	}
	robotgoMu.Lock()
	defer robotgoMu.Unlock()
	if ev.Kind == shinken.PointerDown {
		// The desktop stamps events in milliseconds; a toolkit that orders
		// presses by their stamps does not count a press at the same
		// instant as the one before, so presses are spaced as a hand
		// spaces them.
		if wait := minPressGap - time.Since(b.lastPress); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
		b.lastPress = time.Now()
	}
	p := toPoints(image.Pt(ev.X, ev.Y), b.unit)
	robotgo.Move(p.X, p.Y)
	b.lastMove.p, b.lastMove.ok = [2]int{ev.X, ev.Y}, true
	switch ev.Kind {
	case shinken.PointerDown:
		robotgo.Toggle(buttonNames[ev.Button])
		b.held.buttons[ev.Button] = true
	case shinken.PointerUp:
		robotgo.Toggle(buttonNames[ev.Button], "up")
		b.held.buttons[ev.Button] = false
	case shinken.PointerScroll:
		// robotgo scrolls up and left for positive amounts.
		robotgo.Scroll(-ev.DX, -ev.DY, 0)
	}
	return xerr("injecting a pointer event")
}

// PointerPosition implements [shinken.PointerReporter].
func (b *Backend) PointerPosition(ctx context.Context) (image.Point, error) {
	if err := b.check(ctx); err != nil {
		return image.Point{}, err
	}
	robotgoMu.Lock()
	defer robotgoMu.Unlock()
	q := image.Pt(robotgo.Location())
	if err := xerr("reading the pointer"); err != nil {
		return image.Point{}, err
	}
	// Where a unit spans several pixels, the pixel the pointer was sent to
	// is the better answer while the pointer has not left its unit.
	if last := image.Pt(b.lastMove.p[0], b.lastMove.p[1]); b.lastMove.ok && toPoints(last, b.unit) == q {
		return last, nil
	}
	return toPixels(q, b.unit), nil
}

// Key implements [shinken.Injector]. A name that is neither an X keysym
// name nor a single character is refused with aci.ErrInvalidAction, as
// the X11 and headless backends refuse it. Named keys and printable ASCII
// characters are pressed and released as keys. Any other character has no
// key robotgo can hold: pressing it types it, and releasing it does
// nothing.
func (b *Backend) Key(ctx context.Context, ev shinken.KeyEvent) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	// A name no keyboard has is refused as the other backends refuse it;
	// a real key robotgo cannot press is unsupported.
	if _, ok := keysym.Lookup(ev.Key); !ok {
		return fmt.Errorf("%w: unknown key %q", aci.ErrInvalidAction, ev.Key)
	}
	robotgoMu.Lock()
	defer robotgoMu.Unlock()
	if !ev.Down {
		kp, ok := b.held.keys[ev.Key]
		if !ok {
			var typed bool
			kp, typed, ok = b.resolveKey(ev.Key)
			if typed {
				return nil
			}
			if !ok {
				return fmt.Errorf("robotgo: no key named %q: %w", ev.Key, errors.ErrUnsupported)
			}
		}
		delete(b.held.keys, ev.Key)
		return keyErr(ev.Key, kp.toggle(false))
	}
	kp, typed, ok := b.resolveKey(ev.Key)
	switch {
	case typed:
		return b.typeRun([]rune(ev.Key))
	case !ok:
		return fmt.Errorf("robotgo: no key named %q: %w", ev.Key, errors.ErrUnsupported)
	}
	if err := keyErr(ev.Key, kp.toggle(true)); err != nil {
		return err
	}
	if b.held.keys == nil {
		b.held.keys = map[string]keyPress{}
	}
	b.held.keys[ev.Key] = kp
	return nil
}

// resolveKey finds how robotgo presses key: a keyPress, or typed when the
// key is a character robotgo can only type. ok is false for an unknown
// key. The caller holds robotgoMu.
func (b *Backend) resolveKey(key string) (kp keyPress, typed, ok bool) {
	if name, found := keyNames[key]; found {
		return keyPress{name: name}, false, true
	}
	r, size := utf8.DecodeRuneInString(key)
	if size == 0 || size != len(key) || r == utf8.RuneError {
		return keyPress{}, false, false
	}
	switch {
	case r == ' ':
		return keyPress{name: "space"}, false, true
	case r > ' ' && r < 0x7f:
		// robotgo holds shift for capitals and shifted symbols. With a
		// shift key already held, press the unshifted key instead, so that
		// releasing it does not release the user's shift too.
		if b.held.shiftHeld() {
			if base, shifted := robotgo.Special[key]; shifted {
				return keyPress{name: base}, false, true
			}
			return keyPress{name: strings.ToLower(key)}, false, true
		}
		return keyPress{name: key}, false, true
	case typeable(r):
		return keyPress{}, true, true
	}
	return keyPress{}, false, false
}

// keyErr wraps an error of robotgo's key functions: they fail only for a
// key name they do not know on this platform.
func keyErr(key string, err error) error {
	if err != nil {
		return fmt.Errorf("robotgo: key %q on this platform: %v: %w", key, err, errors.ErrUnsupported)
	}
	return xerr("pressing " + strconv.Quote(key))
}

// Type implements [shinken.Injector]. Characters go through robotgo's
// Unicode typing; line breaks and tabs are Return and Tab key presses,
// because robotgo's X11 typing cannot type them. Characters beyond U+FFFF
// and control characters fail with an error wrapping errors.ErrUnsupported
// before anything is typed: robotgo types UTF-16 units on every platform.
//
// robotgo pauses inside every key press (5 ms on X11), so typing runs at
// about 150 characters a second. On X11 the characters beyond ASCII are
// typed on spare keycodes, each its own, which keep them until the
// Backend is closed: remapping one keycode for each, as robotgo does, a
// loaded toolkit read the next one's mapping and typed it instead.
func (b *Backend) Type(ctx context.Context, text string) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: text is not valid UTF-8", aci.ErrInvalidAction)
	}
	for _, r := range text {
		if !typeable(r) && r != '\n' && r != '\r' && r != '\t' {
			return fmt.Errorf("robotgo: cannot type %U: %w", r, errors.ErrUnsupported)
		}
	}
	runes := []rune(text)
	for len(runes) > 0 {
		if err := b.check(ctx); err != nil {
			return err
		}
		var n int
		var err error
		robotgoMu.Lock()
		switch r := runes[0]; r {
		case '\r', '\n', '\t':
			name := "enter"
			if r == '\t' {
				name = "tab"
			}
			n = 1
			if r == '\r' && len(runes) > 1 && runes[1] == '\n' {
				n = 2
			}
			err = tap(name)
		default:
			for n < len(runes) && n < typeChunk && typeable(runes[n]) {
				n++
			}
			err = b.typeRun(runes[:n])
		}
		robotgoMu.Unlock()
		if err != nil {
			return err
		}
		runes = runes[n:]
	}
	return nil
}

// typeRun types runes, which are all typeable. On X11, robotgo types
// ASCII and typeSpare the rest. The caller holds robotgoMu.
func (b *Backend) typeRun(runes []rune) error {
	if !isX11 {
		robotgo.TypeStr(string(runes))
		return xerr("typing")
	}
	for len(runes) > 0 {
		n := 0
		for n < len(runes) && runes[n] < 0x80 {
			n++
		}
		if n > 0 {
			robotgo.TypeStr(string(runes[:n]))
		} else {
			n = 1
			if err := typeSpare(runes[0]); err != nil {
				return err
			}
		}
		if err := xerr("typing"); err != nil {
			return err
		}
		runes = runes[n:]
	}
	return nil
}

// tap presses and releases the key robotgo names name. The caller holds
// robotgoMu.
func tap(name string) error {
	kp := keyPress{name: name}
	if err := kp.toggle(true); err != nil {
		return keyErr(name, err)
	}
	return keyErr(name, kp.toggle(false))
}

// typeable reports whether robotgo's typing function can type r: a
// printable character in the Basic Multilingual Plane.
func typeable(r rune) bool {
	return r >= ' ' && r != 0x7f && !(r >= 0x80 && r < 0xa0) && r <= 0xffff && !(r >= 0xd800 && r < 0xe000)
}
