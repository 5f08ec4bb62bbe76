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
	// Repaint part of the window, in a new colour each time, until the
	// counter moves: the first paint may fall in the report the mapping
	// raised.
	gc, _ := xproto.NewGcontextId(s.client)
	xproto.CreateGC(s.client, gc, xproto.Drawable(w), 0, nil)
	n := 0
	s.waitFor("a damage notification", func() bool {
		n++
		xproto.ChangeGC(s.client, gc, xproto.GcForeground, []uint32{s.pixel(color.RGBA{0, uint8(n), 255, 255})})
		xproto.PolyFillRectangle(s.client, xproto.Drawable(w), gc, []xproto.Rectangle{{X: 10, Y: 10, Width: 40, Height: 40}})
		xproto.GetInputFocus(s.client).Reply() // flush
		return s.b.DamageSeq() != before
	})

	// Still: once the reports of that drawing are in (the counter holds
	// across 10 round trips with the server), it holds across 30 more.
	roundTrip := func() { xproto.GetInputFocus(s.b.conn).Reply() }
	last, same := s.b.DamageSeq(), 0
	s.waitFor("the damage reports to settle", func() bool {
		roundTrip()
		if cur := s.b.DamageSeq(); cur != last {
			last, same = cur, 0
			return false
		}
		same++
		return same >= 10
	})
	for range 30 {
		roundTrip()
	}
	if got := s.b.DamageSeq(); got != last {
		t.Fatalf("damage counter moved from %d to %d on a still screen", last, got)
	}
}
