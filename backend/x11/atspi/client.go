package atspi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Options configure [Connect]. A nil *Options means the defaults.
type Options struct {
	// Address is the accessibility bus address. "" means discover it:
	// AT_SPI_BUS_ADDRESS, then org.a11y.Bus.GetAddress on the session bus,
	// then the AT_SPI_BUS property of the X root window.
	Address string
	// SessionBus is the session bus address, used to discover the
	// accessibility bus and to set org.a11y.Status. "" means
	// DBUS_SESSION_BUS_ADDRESS, then $XDG_RUNTIME_DIR/bus.
	SessionBus string
	// Display is the X display whose root window may carry AT_SPI_BUS.
	// "" means $DISPLAY.
	Display string
	// ScreenReader also sets org.a11y.Status.ScreenReaderEnabled, which some
	// applications (Chromium, Electron) wait for before exposing a tree.
	// false means only IsEnabled is set.
	ScreenReader bool

	// AppTimeout bounds the walk of one application; an application that
	// takes longer is left out of the snapshot, which is marked truncated.
	// 0 means 2 s. It and CallTimeout grow with the application's lag (a
	// ping through its main loop, ×100, up to 10 s more).
	AppTimeout time.Duration
	// CallTimeout is the longest wait for any one reply: an application
	// that answers nothing for that long is considered hung. 0 means 1 s.
	CallTimeout time.Duration
	// HungBackoff is how long an application that timed out is skipped
	// without being asked again, so that one hung application does not cost
	// every snapshot its timeout. 0 means 10 s.
	HungBackoff time.Duration
	// InFlight bounds the calls in flight to one application. 0 means 64.
	InFlight int
	// MaxNodes is the node budget when SnapshotOptions.MaxNodes is 0.
	// 0 means 3000.
	MaxNodes int
	// MaxDepth is the depth cap when SnapshotOptions.MaxDepth is 0.
	// 0 means 64.
	MaxDepth int
	// NoCache makes every snapshot read every node's role, interfaces,
	// action names and extents again. false (the default) reuses them from
	// earlier snapshots of the same application while its events say they
	// hold, and keeps the mirror of its tree, as described in the package
	// documentation.
	NoCache bool
	// ActivePID, when set, returns the process id of the application that
	// owns the active window (an X11 backend reads _NET_WM_PID of
	// _NET_ACTIVE_WINDOW). TreeActiveApp then prefers that application over
	// the one whose window AT-SPI reports "active". nil means AT-SPI's
	// states alone decide.
	ActivePID func(ctx context.Context) (int, error)
	// Windows, when set, lists the display's top-level windows (an X11
	// backend reads the window manager's client list). A TreeActiveApp
	// snapshot then gives a window with no accessible name the title of
	// its application's window, and lists in Tree.OtherWindows, with
	// their ids, every other window, those of applications with no
	// accessibility tree included: when the active application closes,
	// the snapshot still names what remains. nil means AT-SPI alone names
	// the windows.
	Windows func(ctx context.Context) ([]shinken.Window, error)
	// OnEvent, when set, receives every object event of every application,
	// on the goroutine that reads the bus: it must return quickly and never
	// call the Client. The X11 backend feeds its settle with it.
	OnEvent func(Event)
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.AppTimeout <= 0 {
		r.AppTimeout = 2 * time.Second
	}
	if r.CallTimeout <= 0 {
		r.CallTimeout = time.Second
	}
	if r.HungBackoff <= 0 {
		r.HungBackoff = 10 * time.Second
	}
	if r.InFlight <= 0 {
		r.InFlight = 64
	}
	if r.MaxNodes <= 0 {
		r.MaxNodes = 3000
	}
	if r.MaxDepth <= 0 {
		r.MaxDepth = 64
	}
	return r
}

// A Client reads the accessibility trees of the applications on one AT-SPI
// bus and acts on their nodes. It implements [shinken.A11y] and
// [shinken.ChangeWatcher]. Its methods may be called from any goroutine.
type Client struct {
	opts    Options
	busAddr string
	bus     *dbus.Conn // the control plane: registry, events, addresses

	mu   sync.Mutex
	apps map[string]*app

	watchMu  sync.Mutex
	watchers map[chan struct{}]struct{}

	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	// calls counts the calls sent to applications, for tests that check
	// how many a snapshot costs.
	calls atomic.Uint64

	// testHookAfterStructure, when set, runs in every walk between reading
	// the structure and reading the details, with the application's bus
	// name.
	testHookAfterStructure func(bus string)
}

var (
	_ shinken.A11y          = (*Client)(nil)
	_ shinken.ChangeWatcher = (*Client)(nil)
)

// An app is one application on the bus and our connection to it.
type app struct {
	bus string // unique bus name

	// sem admits one user of conn at a time.
	sem chan struct{}

	mu        sync.Mutex // guards the fields below
	conn      *wireConn
	dest      string // "" on a peer-to-peer connection
	addr      string // its peer-to-peer address, "" when it has none
	addrKnown bool
	pid       int
	hungUntil time.Time

	// memo is read and written by walks, which hold sem, and by the event
	// handler, under its own lock.
	memo memo
}

// Connect finds the accessibility bus, connects to it, turns accessibility
// on and registers for the events [Client.Watch] reports. When there is no
// usable bus the error wraps [aci.ErrA11yUnavailable] and says why.
func Connect(ctx context.Context, opts *Options) (*Client, error) {
	o := opts.withDefaults()
	addr, session, err := findBus(ctx, &o)
	if session != nil {
		defer session.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: no accessibility bus: %v", aci.ErrA11yUnavailable, err)
	}
	if session != nil {
		// A session without the bus launcher's Status object still works for
		// toolkits that expose their tree unconditionally, as GTK 3 does.
		_ = enable(ctx, session, o.ScreenReader)
	}
	c := &Client{opts: o, busAddr: addr, apps: map[string]*app{},
		watchers: map[chan struct{}]struct{}{}, done: make(chan struct{})}
	bus, err := dialControl(ctx, addr, dbus.WithSignalHandler(signalSink{c}))
	if err != nil {
		return nil, fmt.Errorf("%w: accessibility bus %s: %v", aci.ErrA11yUnavailable, addr, err)
	}
	c.bus = bus
	if err := bus.AddMatchSignalContext(ctx, dbus.WithMatchInterface(ifEventObject)); err != nil {
		bus.Close()
		return nil, fmt.Errorf("%w: subscribing to %s: %v", aci.ErrA11yUnavailable, ifEventObject, err)
	}
	if err := bus.AddMatchSignalContext(ctx, dbus.WithMatchInterface(ifCache)); err != nil {
		bus.Close()
		return nil, fmt.Errorf("%w: subscribing to %s: %v", aci.ErrA11yUnavailable, ifCache, err)
	}
	if err := register(ctx, bus); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: %v", aci.ErrA11yUnavailable, err)
	}
	return c, nil
}

// Address returns the address of the accessibility bus the Client is
// connected to.
func (c *Client) Address() string { return c.busAddr }

// Close disconnects from the bus and from every application, and closes
// the channels of every Watch. It waits for the goroutines it started.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.bus.Close()
		c.mu.Lock()
		for _, a := range c.apps {
			a.mu.Lock()
			if a.conn != nil {
				a.conn.c.Close()
			}
			a.mu.Unlock()
		}
		c.mu.Unlock()
	})
	c.wg.Wait()
	return nil
}

func (c *Client) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

var errClientClosed = fmt.Errorf("%w: atspi: client closed", aci.ErrClosed)

// appFor returns the app record for a bus name, creating it.
func (c *Client) appFor(bus string) *app {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.apps[bus]
	if a == nil {
		a = &app{bus: bus, sem: make(chan struct{}, 1)}
		c.apps[bus] = a
	}
	return a
}

// listApps returns the applications the registry knows, in its order, and
// forgets those that left.
func (c *Client) listApps(ctx context.Context) ([]*app, error) {
	var refs []struct {
		Bus  string
		Path dbus.ObjectPath
	}
	err := c.bus.Object(registryName, pathRoot).
		CallWithContext(ctx, ifAccessible+".GetChildren", 0).Store(&refs)
	if err != nil {
		if c.closed() {
			return nil, errClientClosed
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: the AT-SPI registry does not answer: %v", aci.ErrA11yUnavailable, err)
	}
	present := map[string]bool{}
	var apps []*app
	for _, r := range refs {
		if r.Bus == "" || present[r.Bus] {
			continue
		}
		present[r.Bus] = true
		apps = append(apps, c.appFor(r.Bus))
	}
	c.mu.Lock()
	for name, a := range c.apps {
		if !present[name] {
			delete(c.apps, name)
			a.drop()
		}
	}
	c.mu.Unlock()
	return apps, nil
}

// drop closes the app's connection, if any.
func (a *app) drop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn != nil {
		a.conn.c.Close()
		a.conn = nil
	}
}

// hung reports whether the app timed out recently enough to be skipped.
func (a *app) hung() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return time.Now().Before(a.hungUntil)
}

// withApp runs fn with exclusive use of a connection to the application,
// dialling one if needed: peer to peer when the application offers it (one
// hop instead of two through the bus daemon), else through the bus.
func (c *Client) withApp(ctx context.Context, a *app, fn func(conn *wireConn, dest string) error) error {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return errClientClosed
	}
	defer func() { <-a.sem }()
	for attempt := 0; ; attempt++ {
		a.mu.Lock()
		conn, dest := a.conn, a.dest
		a.mu.Unlock()
		reused := conn != nil
		if conn == nil {
			var err error
			conn, dest, err = c.dialApp(ctx, a)
			if err != nil {
				return err
			}
			a.mu.Lock()
			a.conn, a.dest = conn, dest
			a.mu.Unlock()
			if c.closed() {
				a.drop()
				return errClientClosed
			}
		}
		before := conn.received
		err := fn(conn, dest)
		if conn.dead != nil {
			a.mu.Lock()
			if a.conn == conn {
				a.conn = nil
			}
			a.mu.Unlock()
			conn.c.Close()
		}
		if c.closed() {
			return errClientClosed
		}
		// A connection kept from an earlier call may have broken since (the
		// application quit or restarted its bridge): when it failed before
		// answering anything, one fresh attempt tells a broken connection
		// from a broken application.
		if reused && attempt == 0 && conn.dead != nil && conn.received == before && !isTimeout(err) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// markHung makes the app skipped for the backoff period.
func (a *app) markHung(backoff time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hungUntil = time.Now().Add(backoff)
}

// isTimeout reports whether err is a pipeline's reply timeout.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// appTimeout is Options.AppTimeout for a, and callTimeout its
// CallTimeout, each lengthened by a's measured lag (memo.patience): an
// application on a loaded machine answers slowly, and is not hung for it.
// At rest the lag is a fraction of a millisecond, and the limits are as
// set.
func (c *Client) appTimeout(a *app) time.Duration  { return a.memo.patience(c.opts.AppTimeout) }
func (c *Client) callTimeout(a *app) time.Duration { return a.memo.patience(c.opts.CallTimeout) }

// dialApp connects to an application.
func (c *Client) dialApp(ctx context.Context, a *app) (*wireConn, string, error) {
	a.mu.Lock()
	addr, known := a.addr, a.addrKnown
	a.mu.Unlock()
	if !known {
		cctx, cancel := context.WithTimeout(ctx, c.callTimeout(a))
		err := c.bus.Object(a.bus, pathRoot).
			CallWithContext(cctx, ifApplication+".GetApplicationBusAddress", 0).Store(&addr)
		cancel()
		var de dbus.Error
		switch {
		case err == nil:
		case errors.As(err, &de):
			// Any error reply means no peer-to-peer address: Qt 5 and 6
			// answer UnknownObject because their bridge lacks the method,
			// not because they quit. Only a name without an owner is gone.
			switch de.Name {
			case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
				"org.freedesktop.DBus.Error.Disconnected":
				return nil, "", &CallError{Name: de.Name}
			}
			addr = ""
		default:
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			return nil, "", fmt.Errorf("atspi: %s: %w", a.bus, err)
		}
		a.mu.Lock()
		a.addr, a.addrKnown = addr, true
		a.mu.Unlock()
	}
	if addr != "" {
		if conn, err := dialWire(ctx, addr, false); err == nil {
			if samePeerUser(conn.c) {
				return conn, "", nil
			}
			conn.c.Close()
			a.mu.Lock()
			a.addr = "" // another user's application: through the bus from now on
			a.mu.Unlock()
		}
	}
	conn, err := dialWire(ctx, c.busAddr, true)
	if err != nil {
		return nil, "", err
	}
	return conn, a.bus, nil
}

// pipeline starts a pipeline to application a with the Client's limits.
func (c *Client) pipeline(ctx context.Context, a *app, conn *wireConn, deadline time.Time) *pipeline {
	p := newPipeline(ctx, conn, deadline, c.callTimeout(a), c.opts.InFlight)
	p.sent = &c.calls
	return p
}
