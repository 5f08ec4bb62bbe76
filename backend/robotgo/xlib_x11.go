//go:build robotgo && !darwin && !windows

package robotgo

/*
#cgo LDFLAGS: -lX11
#include <X11/Xlib.h>

// robotgo's own C code (base/xdisplay_c.h) defines this without exporting
// it to Go: it closes the X connection robotgo keeps for the process.
extern void XCloseMainDisplay(void);

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

// closeMainDisplay closes the connection robotgo keeps; robotgo opens a
// new one on its next call.
func closeMainDisplay() { C.XCloseMainDisplay() }
