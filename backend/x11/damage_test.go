package x11

import (
	"image"
	"image/color"
	"testing"

	"github.com/jezek/xgb/xproto"
)

// TestDamageSeq: drawing moves the damage counter; a still screen does not.
func TestDamageSeq(t *testing.T) {
	s := newSession(t, nil, nil)
	if !s.b.damage.ok {
		t.Fatal("the X server has no DAMAGE extension")
	}
	w := s.window(windowSpec{r: image.Rect(50, 50, 250, 200), bg: color.RGBA{200, 30, 30, 255}, override: true})
	before := s.b.DamageSeq()
	// Repaint part of the window with another colour.
	gc, _ := xproto.NewGcontextId(s.client)
	xproto.CreateGC(s.client, gc, xproto.Drawable(w), xproto.GcForeground, []uint32{s.pixel(color.RGBA{0, 0, 255, 255})})
	xproto.PolyFillRectangle(s.client, xproto.Drawable(w), gc, []xproto.Rectangle{{X: 10, Y: 10, Width: 40, Height: 40}})
	xproto.GetInputFocus(s.client).Reply() // flush
	s.waitFor("a damage notification", func() bool { return s.b.DamageSeq() != before })

	// Still: the counter holds across a round trip with the server that
	// would have carried any notification.
	quiet := s.b.DamageSeq()
	s.b.Display(ctxT(t))
	xproto.GetInputFocus(s.b.conn).Reply()
	if got := s.b.DamageSeq(); got != quiet {
		t.Fatalf("damage counter moved from %d to %d on a still screen", quiet, got)
	}
}
