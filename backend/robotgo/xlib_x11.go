//go:build robotgo && !darwin && !windows

package robotgo

/*
#cgo LDFLAGS: -lX11 -lXtst
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>

// robotgo's own C code (base/xdisplay_c.h) defines these without exporting
// them to Go: the X connection robotgo keeps for the process, and its end.
extern Display *XGetMainDisplay(void);
extern void XCloseMainDisplay(void);

// spareKeycodes writes to out, up to n, the keycodes that map no keysym,
// highest first, but the second-highest (robotgo's own typing remaps it),
// and returns how many; -1 without a display.
static int spareKeycodes(int *out, int n) {
	Display *d = XGetMainDisplay();
	if (d == NULL) {
		return -1;
	}
	int min, max, per;
	XDisplayKeycodes(d, &min, &max);
	KeySym *m = XGetKeyboardMapping(d, min, max - min + 1, &per);
	if (m == NULL) {
		return 0;
	}
	int k = 0;
	for (int kc = max; kc >= min && k < n; kc--) {
		int empty = kc != max - 1;
		for (int i = 0; i < per && empty; i++) {
			empty = m[(kc - min) * per + i] == NoSymbol;
		}
		if (empty) {
			out[k++] = kc;
		}
	}
	XFree(m);
	return k;
}

// mapKeycode maps sym on keycode kc, shifted or not (NoSymbol empties it),
// and waits for the server to have done it.
static void mapKeycode(int kc, unsigned long sym) {
	Display *d = XGetMainDisplay();
	KeySym syms[2] = {sym, sym};
	XChangeKeyboardMapping(d, kc, 2, syms, 1);
	XSync(d, False);
}

// tapKeycode presses and releases keycode kc.
static void tapKeycode(int kc) {
	Display *d = XGetMainDisplay();
	XTestFakeKeyEvent(d, kc, True, CurrentTime);
	XTestFakeKeyEvent(d, kc, False, CurrentTime);
	XSync(d, False);
}

// lastXError is the code of the last X error since takeXError; robotgoMu
// serialises every Xlib call, so one variable is enough.
static int lastXError;

static int recordXError(Display *d, XErrorEvent *e) {
	lastXError = e->error_code;
	return 0;
}

static void installXErrorHandler(void) { XSetErrorHandler(recordXError); }

static int takeXError(void) {
	int e = lastXError;
	lastXError = 0;
	return e;
}

static int canOpenDisplay(void) {
	Display *d = XOpenDisplay(NULL);
	if (d == NULL) {
		return 0;
	}
	XCloseDisplay(d);
	return 1;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"slices"

	"shinken.dev/go/internal/keysym"
)

// isX11 is true where robotgo drives an X server (Linux and the BSDs).
const isX11 = true

// installXErrorHandler replaces Xlib's default error handler, which prints
// the error and ends the process, with one that records it for takeXError.
func installXErrorHandler() { C.installXErrorHandler() }

// takeXError returns the code of the last X error and forgets it; 0 when
// there was none.
func takeXError() int { return int(C.takeXError()) }

// canOpenDisplay reports whether $DISPLAY can be opened with $XAUTHORITY:
// robotgo's functions dereference the display they open without checking.
func canOpenDisplay() bool { return C.canOpenDisplay() != 0 }

// closeMainDisplay empties the keycodes typeSpare mapped and closes the
// connection robotgo keeps; robotgo opens a new one on its next call.
func closeMainDisplay() {
	for _, kc := range spares.of {
		C.mapKeycode(C.int(kc), 0)
	}
	spares = spareKeys{}
	C.XCloseMainDisplay()
}

// Characters beyond ASCII are typed on spare keycodes, each its own, kept
// until the display is closed. robotgo's typing maps each of them in turn
// on one keycode: a toolkit reads the keyboard mapping again when it
// handles the key, and on a loaded machine it handled "½" once "Ω" was
// mapped there, and typed "Ω".
type spareKeys struct {
	free  []int        // keycodes not used yet
	of    map[rune]int // a character's keycode
	order []rune       // the characters mapped, least recently typed first
}

// spares is the display's. Guarded by robotgoMu.
var spares spareKeys

// maxSpares bounds the keycodes asked for.
const maxSpares = 256

// typeSpare types r on a keycode of its own: the one it was given before,
// else an unused one, else that of the character typed least recently.
// The caller holds robotgoMu.
func typeSpare(r rune) error {
	if spares.of == nil {
		var buf [maxSpares]C.int
		n := int(C.spareKeycodes(&buf[0], maxSpares))
		if n < 0 {
			return fmt.Errorf("%w: typing %q", ErrNoDisplay, r)
		}
		spares.of = map[rune]int{}
		for _, kc := range buf[:n] {
			spares.free = append(spares.free, int(kc))
		}
	}
	kc, ok := spares.of[r]
	switch {
	case ok:
		spares.order = slices.DeleteFunc(spares.order, func(x rune) bool { return x == r })
	case len(spares.free) > 0:
		kc = spares.free[len(spares.free)-1]
		spares.free = spares.free[:len(spares.free)-1]
	case len(spares.order) > 0:
		old := spares.order[0]
		spares.order = spares.order[1:]
		kc = spares.of[old]
		delete(spares.of, old)
	default:
		return fmt.Errorf("robotgo: typing %q: the keyboard has no spare keycode: %w", r, errors.ErrUnsupported)
	}
	if !ok {
		sym, _ := keysym.ForRune(r) // r is typeable: printable, never a control
		C.mapKeycode(C.int(kc), C.ulong(sym))
		spares.of[r] = kc
	}
	spares.order = append(spares.order, r)
	C.tapKeycode(C.int(kc))
	return nil
}
