package session

import (
	"context"
	"fmt"

	"shinken.dev/go/backend/x11/internal/xconn"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// dial connects to the session's own server with its cookie.
func dial(display string, cookie []byte) (*xgb.Conn, error) {
	d, err := xconn.ParseDisplay(display)
	if err != nil {
		return nil, err
	}
	if cookie == nil {
		cookie = []byte{} // none, never $XAUTHORITY's
	}
	return xconn.Connect(context.Background(), d, "", cookie)
}

// wmRunning reports whether an EWMH window manager has announced itself:
// the root's _NET_SUPPORTING_WM_CHECK names a window that names itself.
func wmRunning(conn *xgb.Conn) (bool, error) {
	atom, err := xproto.InternAtom(conn, false, uint16(len("_NET_SUPPORTING_WM_CHECK")), "_NET_SUPPORTING_WM_CHECK").Reply()
	if err != nil {
		return false, err
	}
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	check := func(w xproto.Window) (xproto.Window, error) {
		r, err := xproto.GetProperty(conn, false, w, atom.Atom, xproto.AtomWindow, 0, 1).Reply()
		if err != nil || r.Format != 32 || len(r.Value) < 4 {
			return 0, err
		}
		return xproto.Window(xgb.Get32(r.Value)), nil
	}
	child, err := check(root)
	if err != nil || child == 0 {
		return false, err
	}
	self, err := check(child)
	if err != nil {
		// The window may be gone between the two reads: not ready yet.
		if _, bad := err.(xproto.WindowError); bad {
			return false, nil
		}
		return false, fmt.Errorf("reading the check window: %w", err)
	}
	return self == child, nil
}

// A probeWindow is a window mapped to see whether a window manager acts.
type probeWindow struct {
	conn *xgb.Conn
	root xproto.Window
	win  xproto.Window
	atom xproto.Atom
}

func newProbe(conn *xgb.Conn) (*probeWindow, error) {
	p := &probeWindow{conn: conn, root: xproto.Setup(conn).DefaultScreen(conn).Root}
	win, err := xproto.NewWindowId(conn)
	if err != nil {
		return nil, err
	}
	name := "_SHINKEN_XVFB_PROBE"
	atom, err := xproto.InternAtom(conn, false, uint16(len(name)), name).Reply()
	if err != nil {
		return nil, err
	}
	p.win, p.atom = win, atom.Atom
	err = xproto.CreateWindowChecked(conn, 0, win, p.root, 0, 0, 1, 1, 0,
		xproto.WindowClassInputOutput, 0, 0, nil).Check()
	if err != nil {
		return nil, err
	}
	xproto.MapWindow(conn, win)
	return p, nil
}

// mapped reports whether the window manager has mapped the probe.
func (p *probeWindow) mapped() (bool, error) {
	a, err := xproto.GetWindowAttributes(p.conn, p.win).Reply()
	if err != nil {
		return false, err
	}
	return a.MapState == xproto.MapStateViewable, nil
}

// poke changes a root property, an event the window manager listens to.
func (p *probeWindow) poke() {
	xproto.ChangeProperty(p.conn, xproto.PropModeReplace, p.root, p.atom, xproto.AtomCardinal, 32, 1, []byte{1, 0, 0, 0})
}

func (p *probeWindow) destroy() {
	xproto.DestroyWindow(p.conn, p.win)
	xproto.DeleteProperty(p.conn, p.root, p.atom)
	xproto.GetInputFocus(p.conn).Reply() // make sure both went out before the connection closes
}
