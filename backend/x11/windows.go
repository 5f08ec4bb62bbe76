package x11

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// activationTimeout bounds each way of activating a window: first the
// window manager's, then raising and focusing the window ourselves.
const activationTimeout = time.Second

// noSuchWindow turns the X errors that mean "that window is gone" into an
// error wrapping aci.ErrNoSuchWindow.
func noSuchWindow(id xproto.Window, err error) error {
	switch err.(type) {
	case xproto.WindowError, xproto.DrawableError, xproto.MatchError:
		return fmt.Errorf("%w: 0x%x", aci.ErrNoSuchWindow, uint32(id))
	}
	return fmt.Errorf("x11: window 0x%x: %w", uint32(id), err)
}

// rectCookies are the requests behind a window's rectangle, sent together
// so that many windows cost one round trip.
type rectCookies struct {
	id    xproto.Window
	geom  xproto.GetGeometryCookie
	trans xproto.TranslateCoordinatesCookie
	frame xproto.GetPropertyCookie
	gtk   xproto.GetPropertyCookie
}

func (b *Backend) rectRequests(id xproto.Window) rectCookies {
	return rectCookies{
		id:    id,
		geom:  xproto.GetGeometry(b.conn, xproto.Drawable(id)),
		trans: xproto.TranslateCoordinates(b.conn, id, b.root, 0, 0),
		frame: xproto.GetProperty(b.conn, false, id, b.atoms.netFrameExtents, xproto.AtomCardinal, 0, 4),
		gtk:   xproto.GetProperty(b.conn, false, id, b.atoms.gtkFrameExtents, xproto.AtomCardinal, 0, 4),
	}
}

// rect returns the window's rectangle in root coordinates: its area and
// border, plus the frame the window manager draws around it
// (_NET_FRAME_EXTENTS), minus the invisible shadow a client-side-decorated
// window draws inside its own area (_GTK_FRAME_EXTENTS). Every reply is
// read even after an error, so none is left behind.
func (rc rectCookies) rect() (image.Rectangle, error) {
	g, gerr := rc.geom.Reply()
	t, terr := rc.trans.Reply()
	frame, _ := extents(rc.frame.Reply())
	gtk, _ := extents(rc.gtk.Reply())
	if gerr != nil {
		return image.Rectangle{}, noSuchWindow(rc.id, gerr)
	}
	if terr != nil {
		return image.Rectangle{}, noSuchWindow(rc.id, terr)
	}
	x, y := int(t.DstX), int(t.DstY)
	bw := int(g.BorderWidth)
	r := image.Rect(x-bw, y-bw, x+int(g.Width)+bw, y+int(g.Height)+bw)
	// left, right, top, bottom
	r = image.Rect(r.Min.X-frame[0], r.Min.Y-frame[2], r.Max.X+frame[1], r.Max.Y+frame[3])
	inner := image.Rect(r.Min.X+gtk[0], r.Min.Y+gtk[2], r.Max.X-gtk[1], r.Max.Y-gtk[3])
	if !inner.Empty() {
		r = inner
	}
	return r, nil
}

// extents decodes a CARDINAL[4] left, right, top, bottom property.
func extents(r *xproto.GetPropertyReply, err error) ([4]int, error) {
	var e [4]int
	if err != nil || r == nil || r.Format != 32 || len(r.Value) < 16 {
		return e, err
	}
	for i := range e {
		e[i] = int(int32(xgb.Get32(r.Value[4*i:])))
	}
	return e, nil
}

// windowRect returns the rectangle of window id, as rect describes it.
func (b *Backend) windowRect(ctx context.Context, id xproto.Window) (image.Rectangle, error) {
	if err := b.check(ctx); err != nil {
		return image.Rectangle{}, err
	}
	return b.rectRequests(id).rect()
}

// activeWindow returns the active top-level window, 0 when there is none:
// _NET_ACTIVE_WINDOW when a window manager names one; else (no window
// manager, or one that has not named an active window yet, as openbox does
// for a moment after a window maps) the top-level window holding the input
// focus; else the topmost mapped one.
func (b *Backend) activeWindow() (xproto.Window, error) {
	r, err := xproto.GetProperty(b.conn, false, b.root, b.atoms.netActiveWindow, xproto.AtomWindow, 0, 1).Reply()
	if err != nil {
		return 0, fmt.Errorf("x11: reading the active window: %w", err)
	}
	if r.Format == 32 && len(r.Value) >= 4 {
		if w := xproto.Window(xgb.Get32(r.Value)); w != 0 {
			return w, nil
		}
	}
	clients, err := b.clientWindows()
	if err != nil || len(clients) == 0 {
		return 0, err
	}
	// A client window is a child of the root, or sits in its window
	// manager's frame, which is.
	byTop := make(map[xproto.Window]xproto.Window, len(clients))
	for _, c := range clients {
		if top := b.topLevelOf(c); top != 0 {
			byTop[top] = c
		}
	}
	viewable := func(w xproto.Window) bool {
		a, err := xproto.GetWindowAttributes(b.conn, w).Reply()
		return err == nil && a.MapState == xproto.MapStateViewable
	}
	focus, err := b.focusedTopLevel()
	if err != nil {
		return 0, err
	}
	if c, ok := byTop[focus]; ok && viewable(c) {
		return c, nil
	}
	tree, err := xproto.QueryTree(b.conn, b.root).Reply()
	if err != nil {
		return 0, fmt.Errorf("x11: listing windows: %w", err)
	}
	// Children come in stacking order, bottom first.
	for i := len(tree.Children) - 1; i >= 0; i-- {
		if c, ok := byTop[tree.Children[i]]; ok && viewable(c) {
			return c, nil
		}
	}
	return 0, nil
}

// topLevelOf returns the child of the root that holds w (w itself when it
// is one), or 0 when w is gone.
func (b *Backend) topLevelOf(w xproto.Window) xproto.Window {
	for w != 0 && w != b.root {
		t, err := xproto.QueryTree(b.conn, w).Reply()
		if err != nil {
			return 0
		}
		if t.Parent == b.root {
			return w
		}
		w = t.Parent
	}
	return 0
}

// focusedTopLevel returns the child of the root that holds the focus.
func (b *Backend) focusedTopLevel() (xproto.Window, error) {
	f, err := xproto.GetInputFocus(b.conn).Reply()
	if err != nil {
		return 0, fmt.Errorf("x11: reading the input focus: %w", err)
	}
	w := f.Focus
	for w > xproto.InputFocusPointerRoot && w != b.root {
		t, err := xproto.QueryTree(b.conn, w).Reply()
		if err != nil {
			return 0, nil // the focus window vanished meanwhile
		}
		if t.Parent == b.root {
			return w, nil
		}
		w = t.Parent
	}
	return 0, nil
}

// clientWindows returns the top-level windows: _NET_CLIENT_LIST when a
// window manager keeps it, else the root's mapped, managed-looking children.
func (b *Backend) clientWindows() ([]xproto.Window, error) {
	r, err := xproto.GetProperty(b.conn, false, b.root, b.atoms.netClientList, xproto.AtomWindow, 0, 1<<16).Reply()
	if err != nil {
		return nil, fmt.Errorf("x11: reading the client list: %w", err)
	}
	if r.Format == 32 {
		ids := make([]xproto.Window, len(r.Value)/4)
		for i := range ids {
			ids[i] = xproto.Window(xgb.Get32(r.Value[4*i:]))
		}
		return ids, nil
	}
	tree, err := xproto.QueryTree(b.conn, b.root).Reply()
	if err != nil {
		return nil, fmt.Errorf("x11: listing windows: %w", err)
	}
	cookies := make([]xproto.GetWindowAttributesCookie, len(tree.Children))
	for i, w := range tree.Children {
		cookies[i] = xproto.GetWindowAttributes(b.conn, w)
	}
	var ids []xproto.Window
	for i, c := range cookies {
		a, err := c.Reply()
		if err != nil || a.OverrideRedirect || a.MapState != xproto.MapStateViewable ||
			a.Class != xproto.WindowClassInputOutput || tree.Children[i] == b.win {
			continue
		}
		ids = append(ids, tree.Children[i])
	}
	return ids, nil
}

// Windows lists the top-level windows with their title, application class,
// process id and rectangle (as Capture sees them).
func (b *Backend) Windows(ctx context.Context) ([]shinken.Window, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	ids, err := b.clientWindows()
	if err != nil {
		return nil, err
	}
	active, err := b.activeWindow()
	if err != nil {
		return nil, err
	}
	type cookies struct {
		netName, name, pid, class xproto.GetPropertyCookie
		rect                      rectCookies
	}
	all := make([]cookies, len(ids))
	for i, id := range ids {
		all[i] = cookies{
			netName: xproto.GetProperty(b.conn, false, id, b.atoms.netWMName, b.atoms.utf8String, 0, 1024),
			name:    xproto.GetProperty(b.conn, false, id, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 1024),
			pid:     xproto.GetProperty(b.conn, false, id, b.atoms.netWMPID, xproto.AtomCardinal, 0, 1),
			class:   xproto.GetProperty(b.conn, false, id, xproto.AtomWmClass, xproto.AtomString, 0, 256),
			rect:    b.rectRequests(id),
		}
	}
	windows := make([]shinken.Window, 0, len(ids))
	for i, c := range all {
		netName, _ := c.netName.Reply()
		name, _ := c.name.Reply()
		pid, _ := c.pid.Reply()
		class, _ := c.class.Reply()
		rect, err := c.rect.rect()
		if err != nil {
			continue // closed while we looked
		}
		w := shinken.Window{ID: uint64(ids[i]), BBox: rect, Active: ids[i] == active}
		switch {
		case netName != nil && netName.Format == 8 && len(netName.Value) > 0:
			w.Title = strings.ToValidUTF8(string(netName.Value), "\uFFFD")
		case name != nil && name.Format == 8:
			w.Title = textProperty(name.Type == b.atoms.utf8String, name.Value)
		}
		if pid != nil && pid.Format == 32 && len(pid.Value) >= 4 {
			w.PID = int(xgb.Get32(pid.Value))
		}
		if class != nil && class.Format == 8 {
			// WM_CLASS is "instance\0Class\0"; the class names the app.
			parts := strings.Split(strings.TrimRight(string(class.Value), "\x00"), "\x00")
			w.App = latin1(parts[len(parts)-1])
		}
		windows = append(windows, w)
	}
	return windows, nil
}

// textProperty decodes a STRING (Latin-1) or UTF8_STRING property. Valid
// UTF-8 in a STRING is taken as UTF-8, as many clients write it that way.
func textProperty(isUTF8 bool, v []byte) string {
	if isUTF8 || utf8.Valid(v) {
		return strings.ToValidUTF8(string(v), "\uFFFD")
	}
	return latin1(string(v))
}

// latin1 decodes ISO 8859-1, unless s is already valid UTF-8.
func latin1(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// wmRunning reports whether an EWMH window manager announces itself.
func (b *Backend) wmRunning() bool {
	get := func(w xproto.Window) xproto.Window {
		r, err := xproto.GetProperty(b.conn, false, w, b.atoms.netSupportingWMCheck, xproto.AtomWindow, 0, 1).Reply()
		if err != nil || r.Format != 32 || len(r.Value) < 4 {
			return 0
		}
		return xproto.Window(xgb.Get32(r.Value))
	}
	child := get(b.root)
	return child != 0 && get(child) == child
}

// Activate raises and focuses window id. With a window manager it asks
// through _NET_ACTIVE_WINDOW and confirms by reading the property back;
// without one, or when the window manager does not comply, it maps, raises
// and focuses the window itself.
func (b *Backend) Activate(ctx context.Context, id uint64) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	w := xproto.Window(id)
	if id == 0 || id > 0xffffffff || w == b.root {
		return fmt.Errorf("%w: %d", aci.ErrNoSuchWindow, id)
	}
	attrs, err := xproto.GetWindowAttributes(b.conn, w).Reply()
	if err != nil {
		return noSuchWindow(w, err)
	}
	t, err := b.now(ctx)
	if err != nil {
		return err
	}
	if b.wmRunning() {
		current, _ := b.activeWindow()
		// Source indication 2 says a pager asks, on the user's behalf, so
		// focus-stealing prevention does not apply.
		ev := xproto.ClientMessageEvent{
			Format: 32, Window: w, Type: b.atoms.netActiveWindow,
			Data: xproto.ClientMessageDataUnionData32New([]uint32{2, uint32(t), uint32(current), 0, 0}),
		}
		xproto.SendEvent(b.conn, false, b.root,
			xproto.EventMaskSubstructureNotify|xproto.EventMaskSubstructureRedirect, string(ev.Bytes()))
		if ok, err := b.waitActive(ctx, w); ok || err != nil {
			return err
		}
	}
	if attrs.MapState == xproto.MapStateUnmapped {
		xproto.MapWindow(b.conn, w)
	}
	xproto.ConfigureWindow(b.conn, w, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
	// A window becomes viewable only once mapped, maybe by a window manager.
	if err := b.poll(ctx, func() (bool, error) {
		a, err := xproto.GetWindowAttributes(b.conn, w).Reply()
		if err != nil {
			return false, noSuchWindow(w, err)
		}
		return a.MapState == xproto.MapStateViewable, nil
	}); err != nil {
		if errors.Is(err, errPollTimeout) {
			return fmt.Errorf("x11: window 0x%x was not mapped", id)
		}
		return err
	}
	if err := xproto.SetInputFocusChecked(b.conn, xproto.InputFocusParent, w, t).Check(); err != nil {
		return noSuchWindow(w, err)
	}
	ok, err := b.waitActive(ctx, w)
	if err == nil && !ok {
		err = fmt.Errorf("x11: window 0x%x did not become active", id)
	}
	return err
}

// waitActive waits until w is the active window, if a window manager
// keeps one, and holds the input focus (itself or a descendant). It reports
// false when activationTimeout passes first.
func (b *Backend) waitActive(ctx context.Context, w xproto.Window) (bool, error) {
	err := b.poll(ctx, func() (bool, error) {
		if active, err := b.activeWindow(); err != nil || active != w {
			return false, err
		}
		return b.focusInside(w)
	})
	if errors.Is(err, errPollTimeout) {
		return false, nil
	}
	return err == nil, err
}

// focusInside reports whether the input focus is on w or a descendant.
func (b *Backend) focusInside(w xproto.Window) (bool, error) {
	f, err := xproto.GetInputFocus(b.conn).Reply()
	if err != nil {
		return false, fmt.Errorf("x11: reading the input focus: %w", err)
	}
	for x := f.Focus; x > xproto.InputFocusPointerRoot && x != b.root; {
		if x == w {
			return true, nil
		}
		t, err := xproto.QueryTree(b.conn, x).Reply()
		if err != nil {
			return false, nil // the focus window vanished meanwhile
		}
		x = t.Parent
	}
	return false, nil
}

var errPollTimeout = errors.New("x11: timed out")

// poll calls cond until it reports true, for at most activationTimeout.
func (b *Backend) poll(ctx context.Context, cond func() (bool, error)) error {
	deadline := time.NewTimer(activationTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return errPollTimeout
		case <-tick.C:
		}
	}
}

// ActivePID returns the active window's _NET_WM_PID (for atspi's
// Options.ActivePID), or 0 when no window is active or it does not say.
func (b *Backend) ActivePID(ctx context.Context) (int, error) {
	if err := b.check(ctx); err != nil {
		return 0, err
	}
	w, err := b.activeWindow()
	if err != nil || w == 0 {
		return 0, err
	}
	r, err := xproto.GetProperty(b.conn, false, w, b.atoms.netWMPID, xproto.AtomCardinal, 0, 1).Reply()
	if err != nil {
		return 0, noSuchWindow(w, err)
	}
	if r.Format != 32 || len(r.Value) < 4 {
		return 0, nil
	}
	return int(xgb.Get32(r.Value)), nil
}
