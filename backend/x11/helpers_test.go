package x11

import (
	"context"
	"image"
	"image/color"
	"os"
	"os/exec"
	"shinken.dev/go/backend/x11/internal/xconn"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"go.uber.org/goleak"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session is one test's X session: the server, a backend on it, and a
// separate client connection that plays the part of other applications.
type session struct {
	t      testing.TB
	srv    *xvfb.Server
	b      *Backend
	x      *xvfbtest.XClient
	client *xgb.Conn
	root   xproto.Window
	wm     bool // openbox runs
}

// newSession starts a private X session for t. opts may be nil; so may
// bopts, the backend's options (Display and Xauthority are filled in).
func newSession(t testing.TB, opts *xvfb.Options, bopts *Options) *session {
	t.Helper()
	srv := xvfbtest.Start(t, opts)
	var o Options
	if bopts != nil {
		o = *bopts
	}
	o.Display, o.Xauthority = srv.Display, srv.Xauthority
	if o.SessionBus == "" {
		o.SessionBus = srv.SessionBus
	}
	// Launched apps carry the session marker, so the session's Close
	// finds them.
	o.LaunchEnv = append(o.LaunchEnv, xvfb.MarkerVar+"="+srv.Marker)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := Open(ctx, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	d, _ := xconn.ParseDisplay(srv.Display)
	client, err := xconn.Connect(ctx, d, srv.Xauthority, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := xvfbtest.NewXClient(t, client)
	return &session{t: t, srv: srv, b: b, x: x, client: client, root: x.Root, wm: opts == nil || !opts.NoWM}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// with returns s for use by t, a subtest or sub-benchmark of the test
// that made s: helpers fail t, and cleanups go with t.
func (s *session) with(t testing.TB) *session {
	c := *s
	c.t = t
	return &c
}

// pixel encodes c for the root visual.
func (s *session) pixel(c color.RGBA) uint32 {
	f := s.b.pix
	enc := func(ch channel, v uint8) uint32 {
		x := uint32(v) >> (8 - min(8, ch.bits)) << (max(ch.bits, 8) - 8)
		return x << ch.shift & ch.mask
	}
	return enc(f.r, c.R) | enc(f.g, c.G) | enc(f.b, c.B)
}

// windowSpec describes a test window.
type windowSpec struct {
	r        image.Rectangle
	bg       color.RGBA
	override bool // not managed by the window manager
	title    string
	events   uint32 // event mask selected by the client
	children []childSpec
}

type childSpec struct {
	r  image.Rectangle // relative to the window
	bg color.RGBA
}

// window creates and maps a window painted by the server itself (window
// backgrounds), so no client has to answer Expose, and waits until it is
// viewable.
func (s *session) window(spec windowSpec) xproto.Window {
	s.t.Helper()
	c := s.client
	w, _ := xproto.NewWindowId(c)
	mask := uint32(xproto.CwBackPixel | xproto.CwOverrideRedirect | xproto.CwEventMask)
	or := uint32(0)
	if spec.override {
		or = 1
	}
	err := xproto.CreateWindowChecked(c, 0, w, s.root, int16(spec.r.Min.X), int16(spec.r.Min.Y),
		uint16(spec.r.Dx()), uint16(spec.r.Dy()), 0, xproto.WindowClassInputOutput, 0, mask,
		[]uint32{s.pixel(spec.bg), or, spec.events}).Check()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, ch := range spec.children {
		cw, _ := xproto.NewWindowId(c)
		xproto.CreateWindow(c, 0, cw, w, int16(ch.r.Min.X), int16(ch.r.Min.Y), uint16(ch.r.Dx()), uint16(ch.r.Dy()),
			0, xproto.WindowClassInputOutput, 0, xproto.CwBackPixel, []uint32{s.pixel(ch.bg)})
		xproto.MapWindow(c, cw)
	}
	if spec.title != "" {
		xproto.ChangeProperty(c, xproto.PropModeReplace, w, s.b.atoms.netWMName, s.b.atoms.utf8String, 8,
			uint32(len(spec.title)), []byte(spec.title))
	}
	// Ask the window manager to honour the position: WM_NORMAL_HINTS with
	// USPosition and USSize.
	hints := make([]byte, 18*4)
	xgb.Put32(hints, 1|2)
	xgb.Put32(hints[4:], uint32(spec.r.Min.X))
	xgb.Put32(hints[8:], uint32(spec.r.Min.Y))
	xgb.Put32(hints[12:], uint32(spec.r.Dx()))
	xgb.Put32(hints[16:], uint32(spec.r.Dy()))
	xproto.ChangeProperty(c, xproto.PropModeReplace, w, xproto.AtomWmNormalHints, xproto.AtomWmSizeHints, 32, 18, hints)
	xproto.MapWindow(c, w)
	s.t.Cleanup(func() { xproto.DestroyWindow(c, w) })
	s.waitFor("window viewable", func() bool {
		a, err := xproto.GetWindowAttributes(c, w).Reply()
		return err == nil && a.MapState == xproto.MapStateViewable
	})
	if !spec.override && s.wm {
		// Managed: wait until the window manager has framed it and given
		// it its size (openbox frames a window before it sizes it: under
		// load a capture saw the client 1x1 in a centred frame).
		s.waitFor("frame extents and size", func() bool {
			r, err := xproto.GetProperty(c, false, w, s.b.atoms.netFrameExtents, xproto.AtomCardinal, 0, 4).Reply()
			g, gerr := xproto.GetGeometry(c, xproto.Drawable(w)).Reply()
			return err == nil && r.Format == 32 && gerr == nil && int(g.Width) == spec.r.Dx() && int(g.Height) == spec.r.Dy()
		})
	}
	return w
}

// waitFor polls cond until it holds, failing the test after 10 s.
func (s *session) waitFor(what string, cond func() bool) {
	s.t.Helper()
	waitFor(s.t, what, cond)
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// need stops t when a program is missing: a skip, or a failure with CI=true.
func need(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not installed (CI=true: X tests must run)", p)
			}
			t.Skipf("skipping: %s not installed", p)
		}
	}
}

// findWindow waits for a viewable client window whose title contains
// title. (A window of an app that just exited may linger in the list.)
func (s *session) findWindow(title string) (w struct {
	ID    uint64
	Title string
	PID   int
	BBox  image.Rectangle
}) {
	s.t.Helper()
	ctx := ctxT(s.t)
	s.waitFor("window "+title, func() bool {
		ws, err := s.b.Windows(ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, x := range ws {
			a, err := xproto.GetWindowAttributes(s.client, xproto.Window(x.ID)).Reply()
			if err != nil || a.MapState != xproto.MapStateViewable {
				continue
			}
			if strings.Contains(x.Title, title) {
				w.ID, w.Title, w.PID, w.BBox = x.ID, x.Title, x.PID, x.BBox
				return true
			}
		}
		return false
	})
	return w
}

// nextEvent returns the client's next event that match accepts, dropping
// the others, failing the test after 10 s.
func (s *session) nextEvent(what string, match func(xgb.Event) bool) xgb.Event {
	s.t.Helper()
	return s.x.Next(s.t, what, match)
}

// modifiers returns the modifier state the server reports.
func (s *session) modifiers() uint16 {
	s.t.Helper()
	r, err := xproto.QueryPointer(s.client, s.root).Reply()
	if err != nil {
		s.t.Fatal(err)
	}
	return r.Mask & (xproto.ModMaskShift | xproto.ModMaskLock | xproto.ModMaskControl | xproto.ModMask1 | xproto.ModMask4)
}
