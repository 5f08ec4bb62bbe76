//go:build robotgo

package robotgo

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"go.uber.org/goleak"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session starts a private X session for t and points this process at it.
func session(t testing.TB, opts *xvfb.Options) *xvfb.Server {
	t.Helper()
	srv := xvfbtest.Start(t, opts)
	useDisplay(t, srv)
	return srv
}

// useDisplay points the process at srv: robotgo reads $DISPLAY and
// $XAUTHORITY, and the programs it starts (xclip) inherit the session
// marker, so the session's Close ends them.
func useDisplay(t testing.TB, srv *xvfb.Server) {
	t.Helper()
	t.Setenv("DISPLAY", srv.Display)
	t.Setenv("XAUTHORITY", srv.Xauthority)
	t.Setenv(xvfb.MarkerVar, srv.Marker)
}

// open opens a Backend closed by t's cleanup, which runs before the
// session's: robotgo must let go of the display while it still exists.
func open(t testing.TB) *Backend {
	t.Helper()
	b, err := Open(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// client is a plain X client on the session, playing the application that
// receives what the backend injects.
type client struct {
	*xvfbtest.XClient
	t    testing.TB
	conn *xgb.Conn
	root xproto.Window
}

// newClient connects to the session with the cookie $XAUTHORITY holds.
func newClient(t testing.TB) *client {
	t.Helper()
	conn, err := xgb.NewConn()
	if err != nil {
		t.Fatal(err)
	}
	x := xvfbtest.NewXClient(t, conn)
	return &client{XClient: x, t: t, conn: conn, root: x.Root}
}

// window creates and maps an override-redirect window filled with pixel,
// listening for mask, and waits until it is viewable.
func (c *client) window(x, y, w, h int, pixel uint32, mask uint32) xproto.Window {
	c.t.Helper()
	win, err := xproto.NewWindowId(c.conn)
	if err != nil {
		c.t.Fatal(err)
	}
	err = xproto.CreateWindowChecked(c.conn, 0, win, c.root, int16(x), int16(y), uint16(w), uint16(h), 0,
		xproto.WindowClassInputOutput, 0, xproto.CwBackPixel|xproto.CwOverrideRedirect|xproto.CwEventMask,
		[]uint32{pixel, 1, mask}).Check()
	if err != nil {
		c.t.Fatal(err)
	}
	xproto.MapWindow(c.conn, win)
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := xproto.GetWindowAttributes(c.conn, win).Reply()
		if err == nil && a.MapState == xproto.MapStateViewable {
			return win
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("window %v never became viewable", win)
		}
		time.Sleep(2 * time.Millisecond) // polling the server; no event says "painted"
	}
}

// next returns the next event accepted by keep, failing the test when none
// comes.
func (c *client) next(what string, keep func(xgb.Event) bool) xgb.Event {
	c.t.Helper()
	return c.Next(c.t, what, keep)
}

// fds counts this process's open file descriptors.
func fds(t testing.TB) int {
	t.Helper()
	e, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(e)
}
