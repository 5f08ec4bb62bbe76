package x11

import (
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

var (
	red   = color.RGBA{255, 0, 0, 255}
	green = color.RGBA{0, 255, 0, 255}
	blue  = color.RGBA{0, 0, 255, 255}
	grey  = color.RGBA{0x80, 0x40, 0xc0, 255}
	white = color.RGBA{255, 255, 255, 255}
)

// pattern draws four known rectangles on the screen and returns where.
func (s *session) pattern() map[image.Rectangle]color.RGBA {
	want := map[image.Rectangle]color.RGBA{
		image.Rect(10, 20, 110, 70):    red,
		image.Rect(200, 10, 260, 300):  green,
		image.Rect(300, 300, 340, 341): blue,
		image.Rect(500, 5, 900, 25):    grey,
	}
	for r, c := range want {
		s.window(windowSpec{r: r, bg: c, override: true})
	}
	return want
}

// checkRects checks the corners and centre of each rectangle (in
// coordinates offset from img's), and with strict that the pixel diagonally
// outside each one differs.
func checkRects(t *testing.T, img *image.RGBA, offset image.Point, strict bool, want map[image.Rectangle]color.RGBA) {
	t.Helper()
	for r, c := range want {
		r = r.Sub(offset)
		for _, p := range []image.Point{r.Min, r.Max.Sub(image.Pt(1, 1)), {r.Min.X, r.Max.Y - 1}, {(r.Min.X + r.Max.X) / 2, (r.Min.Y + r.Max.Y) / 2}} {
			if got := img.RGBAAt(p.X, p.Y); got != c {
				t.Errorf("pixel %v of %v: got %v want %v", p, r, got, c)
			}
		}
		// Just outside the rectangle is something else.
		if p := r.Min.Sub(image.Pt(1, 1)); strict && p.In(img.Bounds()) && img.RGBAAt(p.X, p.Y) == c {
			t.Errorf("pixel %v outside %v has its colour too", p, r)
		}
	}
}

// TestCaptureScreen captures a known pattern through MIT-SHM and through
// GetImage in bands, and checks both against it and against each other.
func TestCaptureScreen(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 1024, Height: 768, NoWM: true}, nil)
	ctx := ctxT(t)
	want := s.pattern()
	if !s.b.usingSHM() {
		t.Fatalf("MIT-SHM not in use on a local Xvfb: %v", s.b.capture.shmError)
	}
	shmFrame, err := s.b.Capture(ctx, aci.ScopeScreen)
	if err != nil {
		t.Fatal(err)
	}
	if !s.b.usingSHM() {
		t.Fatalf("MIT-SHM given up: %v", s.b.capture.shmError)
	}
	if shmFrame.Display != (shinken.Display{W: 1024, H: 768, DPR: 1}) || shmFrame.Source != image.Rect(0, 0, 1024, 768) ||
		shmFrame.Image.Bounds() != image.Rect(0, 0, 1024, 768) {
		t.Fatalf("frame geometry: %+v source %v bounds %v", shmFrame.Display, shmFrame.Source, shmFrame.Image.Bounds())
	}
	checkRects(t, shmFrame.Image, image.Point{}, true, want)

	plain, err := Open(ctx, &Options{Display: s.srv.Display, Xauthority: s.srv.Xauthority, DisableSHM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	bandFrame, err := plain.Capture(ctx, aci.ScopeScreen)
	if err != nil {
		t.Fatal(err)
	}
	checkRects(t, bandFrame.Image, image.Point{}, true, want)
	if !equalPix(shmFrame.Image, bandFrame.Image) {
		t.Fatal("MIT-SHM and GetImage captures differ")
	}
	// The band size keeps every reply under 256 KiB: 1024 px rows make
	// 64 rows a band, so 768 rows are 12 bands.
	if rows := bandBytes / plain.pix.stride(1024); rows*plain.pix.stride(1024)+32 > 256<<10 {
		t.Fatalf("band of %d rows too large", rows)
	}
	for i := 3; i < len(shmFrame.Image.Pix); i += 4 {
		if shmFrame.Image.Pix[i] != 255 {
			t.Fatal("alpha not 255 inside the screen")
		}
	}
	writePNG(t, "screen.png", shmFrame.Image)
}

func equalPix(a, b *image.RGBA) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Rect.Min.Y; y < a.Rect.Max.Y; y++ {
		ra := a.Pix[a.PixOffset(a.Rect.Min.X, y):a.PixOffset(a.Rect.Max.X, y)]
		rb := b.Pix[b.PixOffset(b.Rect.Min.X, y):b.PixOffset(b.Rect.Max.X, y)]
		if string(ra) != string(rb) {
			return false
		}
	}
	return true
}

// writePNG saves img for a person to look at when SHINKEN_X11_PNG names a
// directory.
func writePNG(t testing.TB, name string, img image.Image) {
	dir := os.Getenv("SHINKEN_X11_PNG")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// TestCaptureWindowFrame captures a window managed by openbox: the source
// is the client area grown by _NET_FRAME_EXTENTS, and the client's pixels
// sit inside it at the frame's left and top widths.
func TestCaptureWindowFrame(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 800, Height: 600}, nil)
	ctx := ctxT(t)
	w := s.window(windowSpec{r: image.Rect(100, 120, 400, 320), bg: green, title: "framed",
		children: []childSpec{{image.Rect(10, 10, 50, 30), red}}})
	ext, _ := extents(xproto.GetProperty(s.client, false, w, s.b.atoms.netFrameExtents, xproto.AtomCardinal, 0, 4).Reply())
	if ext == [4]int{} {
		t.Fatal("openbox set no frame extents")
	}
	tr, err := xproto.TranslateCoordinates(s.client, w, s.root, 0, 0).Reply()
	if err != nil {
		t.Fatal(err)
	}
	client := image.Rect(int(tr.DstX), int(tr.DstY), int(tr.DstX)+300, int(tr.DstY)+200)
	wantSrc := image.Rect(client.Min.X-ext[0], client.Min.Y-ext[2], client.Max.X+ext[1], client.Max.Y+ext[3])
	f, err := s.b.Capture(ctx, aci.WindowScope(uint64(w)))
	if err != nil {
		t.Fatal(err)
	}
	if f.Source != wantSrc || f.Image.Bounds().Size() != wantSrc.Size() {
		t.Fatalf("source %v (image %v), want %v (client %v, extents %v)", f.Source, f.Image.Bounds(), wantSrc, client, ext)
	}
	checkRects(t, f.Image, f.Source.Min, false, map[image.Rectangle]color.RGBA{
		image.Rect(client.Min.X, client.Min.Y+40, client.Max.X, client.Max.Y): green,
		image.Rect(10, 10, 50, 30).Add(client.Min):                            red,
	})
	// The active-window scope is the same window once it is active.
	if err := s.b.Activate(ctx, uint64(w)); err != nil {
		t.Fatal(err)
	}
	af, err := s.b.Capture(ctx, aci.ScopeActiveWindow)
	if err != nil {
		t.Fatal(err)
	}
	if af.Source != wantSrc {
		t.Fatalf("active window source %v, want %v", af.Source, wantSrc)
	}
	writePNG(t, "window.png", f.Image)
}

// TestCaptureWindowOffscreen captures a window hanging off the top-left
// corner: the source rectangle is negative, the off-screen part is zero
// and the rest is the window.
func TestCaptureWindowOffscreen(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true}, nil)
	ctx := ctxT(t)
	w := s.window(windowSpec{r: image.Rect(-50, -30, 150, 70), bg: blue, override: true,
		children: []childSpec{{image.Rect(60, 40, 80, 50), red}}})
	f, err := s.b.Capture(ctx, aci.WindowScope(uint64(w)))
	if err != nil {
		t.Fatal(err)
	}
	if want := image.Rect(-50, -30, 150, 70); f.Source != want || f.Image.Bounds() != image.Rect(0, 0, 200, 100) {
		t.Fatalf("source %v bounds %v", f.Source, f.Image.Bounds())
	}
	if got := f.Image.RGBAAt(10, 10); got != (color.RGBA{}) {
		t.Fatalf("off-screen pixel %v, want zero", got)
	}
	if got := f.Image.RGBAAt(49, 50); got != (color.RGBA{}) {
		t.Fatalf("off-screen pixel %v, want zero", got)
	}
	checkRects(t, f.Image, image.Point{}, false, map[image.Rectangle]color.RGBA{
		image.Rect(50, 30, 60, 100): blue,
		image.Rect(60, 40, 80, 50):  red,
		image.Rect(80, 30, 200, 40): blue,
	})
	// Right and bottom edges off-screen too.
	w2 := s.window(windowSpec{r: image.Rect(600, 450, 700, 500), bg: red, override: true})
	f2, err := s.b.Capture(ctx, aci.WindowScope(uint64(w2)))
	if err != nil {
		t.Fatal(err)
	}
	if f2.Source != image.Rect(600, 450, 700, 500) || f2.Image.RGBAAt(39, 29) != red || f2.Image.RGBAAt(40, 29) != (color.RGBA{}) ||
		f2.Image.RGBAAt(39, 30) != (color.RGBA{}) {
		t.Fatalf("bottom-right window: source %v, pixels %v %v %v", f2.Source,
			f2.Image.RGBAAt(39, 29), f2.Image.RGBAAt(40, 29), f2.Image.RGBAAt(39, 30))
	}
	writePNG(t, "offscreen.png", f.Image)
}

// TestCaptureGTKExtents checks that a client-side shadow declared in
// _GTK_FRAME_EXTENTS is cut off the window's rectangle.
func TestCaptureGTKExtents(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true}, nil)
	ctx := ctxT(t)
	w := s.window(windowSpec{r: image.Rect(100, 100, 300, 250), bg: grey, override: true})
	ext := make([]byte, 16)
	for i, v := range []uint32{10, 20, 5, 15} { // left, right, top, bottom
		xgb.Put32(ext[4*i:], v)
	}
	xproto.ChangePropertyChecked(s.client, xproto.PropModeReplace, w, s.b.atoms.gtkFrameExtents,
		xproto.AtomCardinal, 32, 4, ext).Check()
	f, err := s.b.Capture(ctx, aci.WindowScope(uint64(w)))
	if err != nil {
		t.Fatal(err)
	}
	if want := image.Rect(110, 105, 280, 235); f.Source != want {
		t.Fatalf("source %v, want %v", f.Source, want)
	}
}

// TestCaptureErrors checks unknown windows and bad scopes.
func TestCaptureErrors(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true}, nil)
	ctx := ctxT(t)
	if _, err := s.b.Capture(ctx, aci.WindowScope(0x7ffffff)); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Fatalf("unknown window: %v", err)
	}
	if _, err := s.b.Capture(ctx, "window:abc"); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("bad scope: %v", err)
	}
	// Without a window manager nothing is active until focused.
	if _, err := s.b.Capture(ctx, aci.ScopeActiveWindow); !errors.Is(err, aci.ErrNoSuchWindow) {
		t.Fatalf("no active window: %v", err)
	}
	s.b.Close()
	if _, err := s.b.Capture(ctx, aci.ScopeScreen); !errors.Is(err, aci.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// TestActiveWindowFallback: with no window manager, the active window is
// the top-level window holding the focus, else the topmost mapped one.
func TestActiveWindowFallback(t *testing.T) {
	s := newSession(t, &xvfb.Options{Width: 320, Height: 240, NoWM: true}, nil)
	ctx := ctxT(t)
	low := s.window(windowSpec{r: image.Rect(10, 10, 110, 90), bg: color.RGBA{200, 0, 0, 255}, title: "low"})
	s.window(windowSpec{r: image.Rect(150, 40, 250, 140), bg: color.RGBA{0, 0, 200, 255}, title: "high"})
	activeTitle := func() string {
		t.Helper()
		ws, err := s.b.Windows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		title := ""
		for _, w := range ws {
			if w.Active {
				if title != "" {
					t.Fatalf("two active windows: %+v", ws)
				}
				title = w.Title
			}
		}
		return title
	}
	// Nothing focused: the topmost mapped window.
	if got := activeTitle(); got != "high" {
		t.Fatalf("active %q, want the topmost, high", got)
	}
	f, err := s.b.Capture(ctx, aci.ScopeActiveWindow)
	if err != nil {
		t.Fatal(err)
	}
	if f.Source.Dx() != 100 || f.Source.Min.X != 150 {
		t.Fatalf("active window capture of %v, want high's rectangle", f.Source)
	}
	// The focus decides over the stacking order.
	xproto.SetInputFocusChecked(s.client, xproto.InputFocusPointerRoot, low, xproto.TimeCurrentTime).Check()
	if got := activeTitle(); got != "low" {
		t.Fatalf("active %q, want the focused, low", got)
	}
}
