// Package x11 is the Shinken backend for a real X server, in pure Go over
// github.com/jezek/xgb.
//
// A [Backend] captures the screen through MIT-SHM (or GetImage in bands when
// shared memory is out of reach), injects input through XTest, lists and
// activates windows through EWMH, holds the clipboard as an X selection
// owner and launches applications into the session. It implements
// [shinken.Capturer], [shinken.Injector], [shinken.Clipboard],
// [shinken.Windows], [shinken.Launcher], [shinken.PointerReporter] and
// [shinken.Settler]: an action is acked once the applications have handled
// it and the screen is quiet (see [Backend.Settle]).
// The accessibility tree comes from AT-SPI, a separate concern.
//
// All methods may be called from any goroutine.
package x11

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/backend/x11/internal/xconn"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xfixes"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"shinken.dev/go/shinken/aci"
)

// Errors of this package; one with a wire code wraps aci's sentinel
// instead (aci.ErrNoSuchWindow, aci.ErrNoSuchApp, aci.ErrTooLarge…).
var (
	// ErrConnect is wrapped by Open when the display cannot be reached or
	// refuses the connection.
	ErrConnect = errors.New("x11: cannot connect to the display")
	// ErrNoXTest is wrapped (with errors.ErrUnsupported) by input methods
	// when the server lacks the XTEST extension.
	ErrNoXTest = errors.New("x11: the server has no XTEST extension")
	// ErrClipboard is wrapped when another client fails to hand over the
	// clipboard, or takes it back at once.
	ErrClipboard = errors.New("x11: clipboard transfer failed")
)

// Options configure a Backend. A nil *Options means the defaults.
type Options struct {
	// Display is the X display name, such as ":1" or "host:0.0". "" means
	// $DISPLAY.
	Display string
	// Xauthority is the authority file holding the display's cookie. ""
	// means $XAUTHORITY, then ~/.Xauthority; a missing file means no cookie.
	Xauthority string
	// SessionBus is the D-Bus session address given to launched apps. ""
	// means this process's $DBUS_SESSION_BUS_ADDRESS.
	SessionBus string
	// LaunchEnv holds extra KEY=VALUE pairs for launched apps, applied last.
	LaunchEnv []string
	// LaunchUser, when set, is the user Launch starts apps as (see
	// LaunchUser); nil means this process's own user.
	LaunchUser *LaunchUser
	// ClipboardLimit caps a clipboard value in bytes; 0 means 16 MiB.
	ClipboardLimit int
	// DisableSHM forces capture through GetImage. By default MIT-SHM is used
	// whenever the server can attach the segment (it cannot across hosts).
	DisableSHM bool
	// SettleQuiet is how long the screen and the accessibility tree must
	// stay unchanged, once the applications have handled an input, for
	// Settle to call the UI settled. 0 means 30 ms.
	SettleQuiet time.Duration
	// SettleQuietBrowser is the quiet window when the input went to a web
	// browser's window, whose renderer may start a navigation tens of
	// milliseconds after its UI process answered. 0 means 50 ms.
	SettleQuietBrowser time.Duration
}

const defaultClipboardLimit = 16 << 20

// A Backend drives one X screen. Close it when done.
type Backend struct {
	conn    *xgb.Conn
	display string // the display name handed to launched apps
	opts    Options
	setup   *xproto.SetupInfo
	screen  *xproto.ScreenInfo
	root    xproto.Window
	win     xproto.Window // our own unmapped window: selection owner and requestor
	atoms   atoms
	pix     pixelFormat
	xtest   bool
	xfixes  bool // selection owner changes are reported to us
	maxReq  int  // largest request the server takes, in bytes

	capture  captureState
	keyboard keyboard
	buttons  buttonState
	clip     clipboard
	clock    clock
	launched launchedApps
	damage   damageState
	settle   settleState

	closed    atomic.Bool
	closeOnce sync.Once
	events    chan struct{} // closed when the event loop ends
}

// Open connects to the X server named by opts. It fails when the display
// cannot be reached or its root visual is not TrueColor or DirectColor.
func Open(ctx context.Context, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ClipboardLimit <= 0 {
		o.ClipboardLimit = defaultClipboardLimit
	}
	name := o.Display
	if name == "" {
		name = os.Getenv("DISPLAY")
	}
	if name == "" {
		return nil, fmt.Errorf("%w: no display given and $DISPLAY is empty", ErrConnect)
	}
	d, err := xconn.ParseDisplay(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	conn, err := xconn.Connect(ctx, d, o.Xauthority, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	b := &Backend{conn: conn, display: name, opts: o, events: make(chan struct{})}
	b.clock.ticks = make(chan xproto.Timestamp, 1)
	if err := b.init(d.Screen); err != nil {
		conn.Close()
		return nil, err
	}
	go b.eventLoop()
	return b, nil
}

func (b *Backend) init(screen int) error {
	b.setup = xproto.Setup(b.conn)
	if screen >= len(b.setup.Roots) {
		return fmt.Errorf("%w: display has no screen %d", ErrConnect, screen)
	}
	b.screen = &b.setup.Roots[screen]
	b.root = b.screen.Root
	b.maxReq = int(b.setup.MaximumRequestLength) * 4
	pix, err := rootPixelFormat(b.setup, b.screen)
	if err != nil {
		return err
	}
	b.pix = pix
	if err := b.atoms.intern(b.conn); err != nil {
		return fmt.Errorf("x11: interning atoms: %w", err)
	}
	b.xtest = xconn.Init(b.conn, xconn.XTest) == nil
	if b.xtest {
		if _, err := xtest.GetVersion(b.conn, 2, 2).Reply(); err != nil {
			b.xtest = false
		}
	}
	b.capture.init(b)
	b.damage.init(b)
	b.settle.init(b)
	b.keyboard.init(b)
	b.clip.init()

	// Our window owns the clipboard and receives what we ask for; the
	// property changes it sees also give us server timestamps.
	win, err := xproto.NewWindowId(b.conn)
	if err != nil {
		return fmt.Errorf("x11: %w", err)
	}
	err = xproto.CreateWindowChecked(b.conn, 0, win, b.root, -10, -10, 1, 1, 0,
		xproto.WindowClassInputOnly, 0, xproto.CwEventMask,
		[]uint32{xproto.EventMaskPropertyChange}).Check()
	if err != nil {
		return fmt.Errorf("x11: creating a window: %w", err)
	}
	b.win = win
	// A copy key promises a new clipboard owner: a read after it waits
	// for the change (clipboard.go).
	if xconn.Init(b.conn, xconn.XFixes) == nil {
		if _, err := xfixes.QueryVersion(b.conn, 5, 0).Reply(); err == nil {
			b.xfixes = xfixes.SelectSelectionInputChecked(b.conn, win, b.atoms.clipboard,
				xfixes.SelectionEventMaskSetSelectionOwner|xfixes.SelectionEventMaskSelectionWindowDestroy|
					xfixes.SelectionEventMaskSelectionClientClose).Check() == nil
		}
	}
	return nil
}

// Close releases every key and button held through this Backend, restores
// the keyboard mapping, gives up the clipboard and closes the connection;
// launched applications keep running. It may be called more than once.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.keyboard.close()
		b.buttons.releaseAll(b)
		b.capture.close(b)
		b.sync()
		b.closed.Store(true)
		b.conn.Close()
		<-b.events
	})
	return nil
}

// check returns an error when b is closed or ctx is done; every method
// calls it first.
func (b *Backend) check(ctx context.Context) error {
	if b.closed.Load() {
		return fmt.Errorf("%w: x11 backend", aci.ErrClosed)
	}
	return ctx.Err()
}

// sync waits until the server has handled every request sent so far.
func (b *Backend) sync() error {
	_, err := xproto.GetInputFocus(b.conn).Reply()
	return err
}

// eventLoop reads every event of the connection. xgb queues events in a
// bounded channel and stalls the whole connection when it is full, so
// something must always read; here the clipboard, the keyboard and the
// clock take what concerns them.
func (b *Backend) eventLoop() {
	defer close(b.events)
	for {
		ev, xerr := b.conn.WaitForEvent()
		if ev == nil && xerr == nil {
			return
		}
		if xerr != nil {
			// Errors of unchecked requests: a requestor window that vanished
			// mid-transfer and the like. Nothing waits for them.
			continue
		}
		switch e := ev.(type) {
		case xproto.SelectionRequestEvent:
			b.clip.serve(b, e)
		case xproto.SelectionClearEvent:
			b.clip.lost(e)
		case xproto.SelectionNotifyEvent:
			if e.Requestor == b.win {
				b.clip.deliver(e)
			}
		case xproto.PropertyNotifyEvent:
			switch {
			case e.Window == b.win && e.Atom == b.atoms.shinkenTime:
				b.clock.tick(e.Time)
			case e.Window == b.win && e.Atom == b.atoms.netFrameExtents:
				b.settle.frameExtents()
			case e.Window == b.win:
				// A read may be in progress, and so may a transfer to
				// ourselves when we read our own selection.
				b.clip.progress(b, e)
				b.clip.deliver(e)
			default:
				b.clip.progress(b, e)
			}
		case xfixes.SelectionNotifyEvent:
			// Our own taking of the clipboard (clipboard_set) is no
			// application's copy: seen late, after a copy key, it would
			// end that key's wait before the application copied.
			if e.Selection == b.atoms.clipboard && e.Owner != b.win {
				b.clip.ownerChanged()
			}
		case xproto.MappingNotifyEvent:
			if e.Request == xproto.MappingKeyboard || e.Request == xproto.MappingModifier {
				b.keyboard.stale.Store(true)
			}
		case damage.NotifyEvent:
			if !b.settle.damageEvent(b, e) {
				b.damage.notify(b, e)
			}
		case xproto.ClientMessageEvent:
			b.settle.clientMessage(e)
		case xproto.DestroyNotifyEvent:
			b.settle.destroyed(e.Window)
		}
	}
}

// A clock hands out server timestamps: a zero-length append to a property
// of our window makes the server report its time in a PropertyNotify.
type clock struct {
	mu    sync.Mutex
	ticks chan xproto.Timestamp
}

func (c *clock) tick(t xproto.Timestamp) {
	select {
	case c.ticks <- t:
	default:
	}
}

// now returns the server's current time.
func (b *Backend) now(ctx context.Context) (xproto.Timestamp, error) {
	c := &b.clock
	c.mu.Lock()
	defer c.mu.Unlock()
drain: // a late tick from an abandoned call must not be taken for ours
	for {
		select {
		case <-c.ticks:
		default:
			break drain
		}
	}
	xproto.ChangeProperty(b.conn, xproto.PropModeAppend, b.win, b.atoms.shinkenTime,
		xproto.AtomInteger, 8, 0, nil)
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	select {
	case t := <-c.ticks:
		return t, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-b.events:
		return 0, fmt.Errorf("%w: x11 connection", aci.ErrClosed)
	case <-timer.C:
		return 0, errors.New("x11: the server reported no time")
	}
}

// atoms are the atoms the backend uses, interned once at Open.
type atoms struct {
	clipboard, targets, timestamp, multiple, utf8String, text, incr xproto.Atom
	netClientList, netActiveWindow, netWMName, netWMPID             xproto.Atom
	netFrameExtents, gtkFrameExtents, netSupportingWMCheck, wmState xproto.Atom
	netSupported, shinkenSelection, shinkenTime, netWMStateHidden   xproto.Atom
	netWMState                                                      xproto.Atom
}

func (a *atoms) intern(conn *xgb.Conn) error {
	list := []struct {
		name string
		atom *xproto.Atom
	}{
		{"CLIPBOARD", &a.clipboard}, {"TARGETS", &a.targets}, {"TIMESTAMP", &a.timestamp},
		{"MULTIPLE", &a.multiple}, {"UTF8_STRING", &a.utf8String}, {"TEXT", &a.text},
		{"INCR", &a.incr}, {"_NET_CLIENT_LIST", &a.netClientList},
		{"_NET_ACTIVE_WINDOW", &a.netActiveWindow}, {"_NET_WM_NAME", &a.netWMName},
		{"_NET_WM_PID", &a.netWMPID}, {"_NET_FRAME_EXTENTS", &a.netFrameExtents},
		{"_GTK_FRAME_EXTENTS", &a.gtkFrameExtents},
		{"_NET_SUPPORTING_WM_CHECK", &a.netSupportingWMCheck}, {"WM_STATE", &a.wmState},
		{"_NET_SUPPORTED", &a.netSupported}, {"_SHINKEN_SELECTION", &a.shinkenSelection},
		{"_SHINKEN_TIME", &a.shinkenTime}, {"_NET_WM_STATE_HIDDEN", &a.netWMStateHidden},
		{"_NET_WM_STATE", &a.netWMState},
	}
	cookies := make([]xproto.InternAtomCookie, len(list))
	for i, l := range list {
		cookies[i] = xproto.InternAtom(conn, false, uint16(len(l.name)), l.name)
	}
	for i, c := range cookies {
		r, err := c.Reply()
		if err != nil {
			return err
		}
		*list[i].atom = r.Atom
	}
	return nil
}
