// Package robotgo is a Shinken backend over
// github.com/go-vgo/robotgo: screen capture, pointer, keyboard and Unicode
// typing, and the clipboard, wherever robotgo builds (Linux with X11, macOS,
// Windows).
//
// robotgo needs cgo, so the backend is built only with the robotgo build
// tag (go build -tags robotgo); on Debian it needs libx11-dev and
// libxtst-dev. Without the tag this package holds only the pure geometry
// below, and the default build of the module stays free of cgo.
//
// # What robotgo provides, and what it does not
//
// A [Backend] implements [shinken.Capturer] (the screen; a window on
// Windows), [shinken.Injector], [shinken.PointerReporter] and
// [shinken.PlatformReporter]. [Backend.Clipboard] adds [shinken.Clipboard]
// where robotgo's clipboard works (on Linux it runs xclip or xsel), and
// [Backend.Desktop] hands the Runtime exactly the capabilities that work.
//
// It has no accessibility tree, no window list and no launcher: robotgo
// offers no window enumeration and no way to start an application without
// waiting for it to end, so the backend does not implement [shinken.A11y],
// [shinken.Windows] or [shinken.Launcher] and the welcome does not
// advertise their verbs. On Linux, AT-SPI (backend/x11/atspi) can supply
// the tree beside it.
//
// The window scopes of Capture work on Windows only; elsewhere they fail
// with an error wrapping errors.ErrUnsupported. On X11 robotgo's window
// functions open display connections they never close (eight for one
// title and handle) and crash the process on a window that does not
// exist; on macOS they read bounds by process id, not by window.
//
// # Coordinates
//
// The action space is the screen in device pixels, the space the captured
// images are in. robotgo itself speaks in its platform's units: device
// pixels on X11 and Windows, logical points on macOS. [toPoints] and
// [toPixels] are the one place where the two meet, and robotgo's own
// scaling (robotgo.Scale) stays off. The display scale robotgo reports is
// passed on as Display.DPR only, rounded to a quarter: on X11 robotgo
// derives it from Xft.dpi or, failing that, from the screen's size in
// millimetres, which gives figures such as 1.04 that no toolkit renders at.
//
// # Process-wide state
//
// robotgo keeps its state in C globals: one X connection for the process,
// one keyboard. Every Backend of a process drives the same desktop (on X11
// the display named by $DISPLAY, with $XAUTHORITY), and calls into robotgo
// are serialised process-wide. If the X server goes away while a Backend is
// open, Xlib ends the process.
package robotgo

import "image"

// toPoints maps a point in device pixels to robotgo's units, where unit
// device pixels make one robotgo unit: the unit that holds the pixel. The
// division floors, so pixels left of or above the primary screen (negative
// coordinates) map to the unit that holds them too.
func toPoints(p image.Point, unit int) image.Point {
	return image.Pt(floorDiv(p.X, unit), floorDiv(p.Y, unit))
}

// toPixels maps a point in robotgo's units to device pixels: the top-left
// pixel of the unit. toPoints(toPixels(q, u), u) == q for every q.
func toPixels(q image.Point, unit int) image.Point {
	return q.Mul(unit)
}

// pointsCovering returns the smallest rectangle in robotgo's units whose
// pixels cover r, built from the pair above: the unit holding r's top-left
// pixel to the one holding its bottom-right pixel, inclusive.
func pointsCovering(r image.Rectangle, unit int) image.Rectangle {
	if r.Empty() {
		return image.Rectangle{}
	}
	return image.Rectangle{Min: toPoints(r.Min, unit), Max: toPoints(r.Max.Sub(image.Pt(1, 1)), unit).Add(image.Pt(1, 1))}
}

// unitFor returns how many device pixels make one robotgo unit on goos,
// given the display scale robotgo reports there. Only macOS speaks in
// points (its backing scale is a whole number: 1, 2 or 3); X11 and Windows
// take and give device pixels whatever their scale setting, and scaling
// their coordinates by it is the classic way clicks land off target.
func unitFor(goos string, scale float64) int {
	if goos != "darwin" || !(scale >= 1.5) {
		return 1
	}
	return int(scale + 0.5)
}

// dprFor turns the scale robotgo reports into a DPR: rounded to the nearest
// quarter, at least a quarter, and 1 when robotgo reports nothing usable.
func dprFor(scale float64) float64 {
	if !(scale > 0) || scale > 16 {
		return 1
	}
	q := float64(int(scale*4+0.5)) / 4
	return max(q, 0.25)
}

// floorDiv divides rounding towards minus infinity.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
