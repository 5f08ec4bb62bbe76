package x11

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Accessible is a Backend with its applications' accessibility tree, read
// over AT-SPI: it also implements shinken.A11y and shinken.ChangeWatcher.
// The accessibility bus is found on first use, and looked for again (at
// most every few seconds) while unreachable: until then observations
// answer a11y_unavailable.
type Accessible struct {
	*Backend

	opts atspi.Options

	mu     sync.Mutex
	c      *atspi.Client
	err    error
	tried  time.Time
	a11yOn bool // a bus was connected once (see CheckAccessibility)
	// scrolled is the layout of the browser a scroll went to, before it
	// (see Settle), that browser's process and the point scrolled.
	scrolled    string
	scrolledPID int
	scrolledAt  image.Point
}

// retryA11y is how long a failed connection to the accessibility bus is
// remembered before the next try.
const retryA11y = 3 * time.Second

// WithAccessibility returns b with the accessibility tree of its apps. opts
// configures the AT-SPI client (nil means defaults); its ActivePID and
// Windows default to b's, so that the active application owns the focused
// window and b names the windows AT-SPI does not. Close the Accessible
// rather than b: it closes both.
func (b *Backend) WithAccessibility(opts *atspi.Options) *Accessible {
	a := &Accessible{Backend: b}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.ActivePID == nil {
		a.opts.ActivePID = b.ActivePID
	}
	if a.opts.Windows == nil {
		a.opts.Windows = b.Windows
	}
	if a.opts.Display == "" {
		a.opts.Display = b.display
	}
	// A lagging browser's settle waits longer for it to catch up.
	lag := a.patience
	b.settle.lag.Store(&lag)
	// Every object event is a change the settle waits out.
	user := a.opts.OnEvent
	a.opts.OnEvent = func(e atspi.Event) {
		b.settle.a11yEvent(e)
		if user != nil {
			user(e)
		}
	}
	return a
}

// Settle implements shinken.Settler: [Backend.Settle], with the
// accessibility bus's events (connected on first use) among the changes it
// waits out. After a scroll into a browser's window it also waits, up to
// 1.5 s (more for a lagging browser), until the browser's tree shows what
// its pixels show ([atspi.Client.Layout]): a browser reports no scroll.
func (a *Accessible) Settle(ctx context.Context, start time.Time, limit time.Duration) (shinken.SettleReport, error) {
	c, _ := a.client(ctx) // an unreachable bus leaves the screen alone to watch
	a.mu.Lock()
	before, pid, at := a.scrolled, a.scrolledPID, a.scrolledAt
	a.scrolled, a.scrolledPID = "", 0
	a.mu.Unlock()
	end := time.Now().Add(limit)
	rep, err := a.Backend.Settle(ctx, start, limit)
	if err != nil || c == nil || before == "" || rep.Outcome != shinken.SettleQuiet || rep.Changes == 0 {
		return rep, err
	}
	// A busy browser catches up late: its windows grow with its lag.
	wait, quiet := c.Patience(pid, layoutWait), c.Patience(pid, layoutQuiet)
	if bound := time.Now().Add(wait); bound.Before(end) {
		end = bound
	}
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	last, since := before, time.Now()
	for {
		now, err := c.Layout(ctx, pid, at)
		if err != nil || now == "" {
			return rep, nil
		}
		if now != last {
			last, since = now, time.Now()
		} else if now != before && time.Since(since) >= quiet {
			return rep, nil
		}
		t := time.NewTimer(layoutPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return rep, nil
		}
	}
}

// A browser sends no event when a page scrolls, and Chromium updates its
// tree's extents some time after its pixels: a look right after the pixels
// settled read the items where they were, and a click by ref took the
// wrong one. So after a scroll, Settle waits until the layout differs from
// the one before and held still for layoutQuiet, or for layoutWait when the
// scroll moved nothing the tree holds.
//
// layoutWait bounds Settle's wait for a browser's tree to show a scroll;
// layoutPoll is how often it reads the layout meanwhile, and layoutQuiet
// how long the layout must hold still once the pixels have: Chromium
// moves its tree with the first frame of a smooth scroll, then sends
// where the scroll ended with its deferred tree updates, 150 ms after
// the page last changed (measured on a loaded machine: up to 280 ms after
// the last paint). Both are an idle machine's: atspi's Patience
// lengthens them by the browser's measured lag.
const (
	layoutWait  = 1500 * time.Millisecond
	layoutPoll  = 10 * time.Millisecond
	layoutQuiet = 350 * time.Millisecond
)

// Pointer implements shinken.Injector: [Backend.Pointer], noting before a
// scroll into a browser's active window where its tree places content.
func (a *Accessible) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	if ev.Kind == shinken.PointerScroll {
		a.noteLayout(ctx, image.Pt(ev.X, ev.Y))
	}
	return a.Backend.Pointer(ctx, ev)
}

// noteLayout records the layout of the browser that owns the active
// window, if it is one.
func (a *Accessible) noteLayout(ctx context.Context, at image.Point) {
	a.mu.Lock()
	c := a.c
	a.mu.Unlock()
	if c == nil {
		return
	}
	w, err := a.activeWindow()
	if err != nil {
		return
	}
	p := a.profile(w)
	if !p.browser || p.pid <= 0 {
		return
	}
	if l, err := c.Layout(ctx, p.pid, at); err == nil && l != "" {
		a.mu.Lock()
		a.scrolled, a.scrolledPID, a.scrolledAt = l, p.pid, at
		a.mu.Unlock()
	}
}

// patience is [atspi.Client.Patience] once the bus is connected, d before.
func (a *Accessible) patience(pid int, d time.Duration) time.Duration {
	a.mu.Lock()
	c := a.c
	a.mu.Unlock()
	if c == nil {
		return d
	}
	return c.Patience(pid, d)
}

func (a *Accessible) client(ctx context.Context) (*atspi.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.c != nil {
		return a.c, nil
	}
	if a.err != nil && time.Since(a.tried) < retryA11y {
		return nil, a.err
	}
	a.tried = time.Now()
	a.c, a.err = atspi.Connect(ctx, &a.opts)
	if a.err == nil {
		a.publishBus(a.c.Address())
	}
	return a.c, a.err
}

// publishBus sets the AT_SPI_BUS property of the root window to addr when
// no other program did. Qt applications look for the accessibility bus
// there and nowhere else; the bus launcher sets it only when built with X
// support, and the X server drops it when its last client leaves, which
// the Backend's own connection prevents. Failing to set it only keeps Qt
// applications out of the tree, so errors are not reported.
func (a *Accessible) publishBus(addr string) {
	const name = "AT_SPI_BUS"
	atom, err := xproto.InternAtom(a.conn, false, uint16(len(name)), name).Reply()
	if err != nil {
		return
	}
	prop, err := xproto.GetProperty(a.conn, false, a.root, atom.Atom, xproto.AtomString, 0, 1024).Reply()
	if err != nil || prop.ValueLen > 0 {
		return
	}
	xproto.ChangePropertyChecked(a.conn, xproto.PropModeReplace, a.root, atom.Atom, xproto.AtomString, 8,
		uint32(len(addr)), []byte(addr)).Check()
}

// Snapshot implements shinken.A11y.
func (a *Accessible) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	c, err := a.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.Snapshot(ctx, opts)
}

// Perform implements shinken.A11y. A set_value the node cannot take through
// its interfaces (a browser's field; no editable text) is typed over its
// text (focus, ctrl+a) and read back. A combo box whose popup holds the
// option highlighted but not taken (Qt's) gets Return.
func (a *Accessible) Perform(ctx context.Context, id string, act shinken.ElementAction) error {
	c, err := a.client(ctx)
	if err != nil {
		return err
	}
	err = c.Perform(ctx, id, act)
	var popup *atspi.PopupOpenError
	switch {
	case act.Op != shinken.OpSetValue:
		return err
	case errors.As(err, &popup):
		return a.takeOption(ctx, c, popup)
	case errors.Is(err, atspi.ErrNeedsTyping):
		return a.typeValue(ctx, c, id, act.Text, err)
	}
	return err
}

// takeOption moves the keyboard focus of a combo box's open popup to the
// option (Down or Up from the current one) and presses Return, then checks
// that the box took it; else Escape closes the popup.
func (a *Accessible) takeOption(ctx context.Context, c *atspi.Client, popup *atspi.PopupOpenError) error {
	press := func(key string) error {
		if err := a.Key(ctx, shinken.KeyEvent{Key: key, Down: true}); err != nil {
			return err
		}
		return a.Key(ctx, shinken.KeyEvent{Key: key})
	}
	key, moves := "Down", popup.Moves
	if moves < 0 {
		key, moves = "Up", -moves
	}
	for range moves {
		if err := press(key); err != nil {
			return fmt.Errorf("%w: %v; then pressing %s: %v", aci.ErrElementNotActionable, popup, key, err)
		}
	}
	if err := press("Return"); err != nil {
		return fmt.Errorf("%w: %v; then pressing Return: %v", aci.ErrElementNotActionable, popup, err)
	}
	limit := time.Now().Add(typedReadBack)
	for {
		name, err := c.Name(ctx, popup.ID)
		if err != nil {
			return fmt.Errorf("%w: %v; then reading it back: %v", aci.ErrElementNotActionable, popup, err)
		}
		if name == popup.Option {
			return nil
		}
		if time.Now().After(limit) {
			press("Escape")
			return fmt.Errorf("%w: %v; then moving %d rows and pressing Return, but it shows %q", aci.ErrElementNotActionable, popup, popup.Moves, name)
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// typeValue sets a field's text from the keyboard and checks it took;
// first is why its interfaces could not.
func (a *Accessible) typeValue(ctx context.Context, c *atspi.Client, id, text string, first error) error {
	fail := func(step string, err error) error {
		return fmt.Errorf("%w: set_value on %s: %v; then %s: %v", aci.ErrElementNotActionable, id, first, step, err)
	}
	if err := c.Focus(ctx, id); err != nil {
		return fail("focusing it", err)
	}
	for _, k := range []shinken.KeyEvent{{Key: "Control_L", Down: true}, {Key: "a", Down: true}, {Key: "a"}, {Key: "Control_L"}} {
		if err := a.Key(ctx, k); err != nil {
			return fail("selecting its text with ctrl+a", err)
		}
	}
	var err error
	if text == "" {
		err = a.Key(ctx, shinken.KeyEvent{Key: "BackSpace", Down: true})
		if err == nil {
			err = a.Key(ctx, shinken.KeyEvent{Key: "BackSpace"})
		}
	} else {
		err = a.Type(ctx, text)
	}
	if err != nil {
		return fail("typing", err)
	}
	// The application reads the keyboard on its own loop: poll until the
	// field holds the text, or stops changing for typedReadBack (on a
	// loaded machine a field takes the keys one by one, late, and each
	// change it shows is progress: ctx bounds the whole).
	limit := time.Now().Add(typedReadBack)
	got, seen := "", ""
	for {
		got, err = c.Text(ctx, id)
		if err != nil {
			return fail("reading it back", err)
		}
		if got == text || masked(got, text) {
			return nil
		}
		if got != seen {
			limit = time.Now().Add(typedReadBack)
		}
		seen = got
		if time.Now().After(limit) {
			break
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	return fmt.Errorf("%w: set_value on %s: %v; focused it, selected all (ctrl+a) and typed %q, but it reads %q",
		aci.ErrElementNotActionable, id, first, text, got)
}

// typedReadBack bounds how long a field may show no change while typed
// text is on its way to it.
const typedReadBack = time.Second

// Locate implements shinken.Locator: element verbs on the pointer find
// their element's visible part in a few calls, scrolled into view.
func (a *Accessible) Locate(ctx context.Context, id string, ancestors []string) (image.Rectangle, error) {
	c, err := a.client(ctx)
	if err != nil {
		return image.Rectangle{}, err
	}
	return c.Locate(ctx, id, ancestors)
}

// Watch implements shinken.ChangeWatcher. Without a bus it reports no
// change, and closes with ctx.
func (a *Accessible) Watch(ctx context.Context) <-chan struct{} {
	c, err := a.client(ctx)
	if err != nil {
		ch := make(chan struct{})
		context.AfterFunc(ctx, func() { close(ch) })
		return ch
	}
	return c.Watch(ctx)
}

// Close closes the AT-SPI client, if one was connected, and the Backend.
func (a *Accessible) Close() error {
	a.mu.Lock()
	c := a.c
	a.c, a.err = nil, aci.ErrClosed
	a.tried = time.Now().Add(time.Hour)
	a.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return a.Backend.Close()
}

// masked reports whether got is what a password field shows for text: one
// mask character per character.
func masked(got, text string) bool {
	n := utf8.RuneCountInString(text)
	if got == "" || utf8.RuneCountInString(got) != n {
		return false
	}
	r, _ := utf8.DecodeRuneInString(got)
	return strings.ContainsRune("●•*∗", r) && strings.Count(got, string(r)) == n
}
