//go:build robotgo

package robotgo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-vgo/robotgo"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Errors of this package. Errors that map to a wire code wrap the shinken
// sentinels instead (aci.ErrClosed, aci.ErrNoSuchWindow).
var (
	// ErrNoDisplay is wrapped by Open on X11 when $DISPLAY is empty or the
	// display cannot be opened. robotgo would otherwise fall back to :0 or
	// crash on its first call.
	ErrNoDisplay = errors.New("robotgo: cannot open the X display")
	// ErrX is wrapped when the X server rejected a request robotgo made
	// for us: a key the keyboard map lacks, for instance.
	ErrX = errors.New("robotgo: the X server rejected a request")
)

// Options configure a Backend. A nil *Options means the defaults.
type Options struct {
	// DPR is the device pixel ratio that Display reports. 0 means the
	// display scale robotgo reports, rounded to a quarter.
	DPR float64
}

// A Backend drives the desktop of this process through robotgo. Its
// methods may be called from any goroutine. Close it when done.
type Backend struct {
	unit int     // device pixels per robotgo unit
	dpr  float64 // reported as Display.DPR

	// held records what this Backend pressed and has not released, so that
	// Close leaves no button or key down. Guarded by robotgoMu.
	held held
	// lastMove is the last pixel the pointer was sent to, so that
	// PointerPosition can answer in pixels where a robotgo unit spans
	// several. Guarded by robotgoMu.
	lastMove struct {
		p  [2]int
		ok bool
	}
	// lastPress is when the last button press was sent. Guarded by
	// robotgoMu.
	lastPress time.Time

	closed    atomic.Bool
	closeOnce sync.Once
}

// robotgoMu serialises every call into robotgo: its state (the X
// connection, the keyboard mapping it rewrites to type, the last X error)
// is global to the process, and Xlib is not thread-safe.
var robotgoMu sync.Mutex

// installHandler installs the process's X error handler once.
var installHandler sync.Once

// Open prepares a Backend for the desktop of this process. On X11 it
// checks that $DISPLAY can be opened, and installs an X error handler that
// records errors instead of ending the process (Xlib's default), so that a
// request robotgo gets wrong fails one call rather than the program.
func Open(ctx context.Context, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	robotgoMu.Lock()
	defer robotgoMu.Unlock()
	if isX11 {
		if os.Getenv("DISPLAY") == "" {
			return nil, fmt.Errorf("%w: $DISPLAY is empty", ErrNoDisplay)
		}
		if !canOpenDisplay() {
			return nil, fmt.Errorf("%w: %s (check $DISPLAY and $XAUTHORITY)", ErrNoDisplay, os.Getenv("DISPLAY"))
		}
		installHandler.Do(installXErrorHandler)
	}
	scale := robotgo.ScaleF()
	b := &Backend{unit: unitFor(runtime.GOOS, scale), dpr: o.DPR}
	if b.dpr <= 0 {
		b.dpr = dprFor(scale)
	}
	return b, nil
}

// Close releases every button and key still held through this Backend and
// closes robotgo's connection to the display, which robotgo opens again
// when another Backend needs it. It is safe to call more than once.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		robotgoMu.Lock()
		defer robotgoMu.Unlock()
		b.held.releaseAll()
		b.closed.Store(true)
		closeMainDisplay()
	})
	return nil
}

// check returns an error when b is closed or ctx is done; every method
// calls it first.
func (b *Backend) check(ctx context.Context) error {
	if b.closed.Load() {
		return fmt.Errorf("%w: robotgo backend", aci.ErrClosed)
	}
	return ctx.Err()
}

// xerr returns an error wrapping ErrX when the X server rejected one of
// the requests robotgo made since the last call; nil elsewhere. The caller
// holds robotgoMu.
func xerr(what string) error {
	if code := takeXError(); code != 0 {
		return fmt.Errorf("%w while %s (X error %d)", ErrX, what, code)
	}
	return nil
}

// Platform implements [shinken.PlatformReporter].
func (b *Backend) Platform() aci.Platform {
	switch runtime.GOOS {
	case "darwin":
		return aci.PlatformMacOS
	case "windows":
		return aci.PlatformWindows
	}
	return aci.PlatformLinux
}

// Desktop returns the value to hand to shinken.NewRuntime: b itself, or b
// with its [Clipboard] when robotgo's clipboard works here. The Runtime
// advertises what the value implements, so a machine without a clipboard
// tool does not announce clipboard verbs it would fail.
func (b *Backend) Desktop() shinken.Backend {
	if c, err := b.Clipboard(); err == nil {
		return &withClipboard{b, c}
	}
	return b
}

// withClipboard is a Backend with its clipboard.
type withClipboard struct {
	*Backend
	*Clipboard
}

var (
	_ shinken.Capturer         = (*Backend)(nil)
	_ shinken.Injector         = (*Backend)(nil)
	_ shinken.PointerReporter  = (*Backend)(nil)
	_ shinken.PlatformReporter = (*Backend)(nil)
	_ shinken.Clipboard        = (*Clipboard)(nil)
	_ shinken.Clipboard        = (*withClipboard)(nil)
)
