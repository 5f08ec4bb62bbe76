package x11

import (
	"image"
	"image/color"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"
)

// lineRects returns n rectangles of a terminal's lines, 1200×13 each, from
// the top of the screen down.
func lineRects(n int) []image.Rectangle {
	rs := make([]image.Rectangle, n)
	for i := range rs {
		rs[i] = image.Rect(0, 13*i, 1200, 13*(i+1))
	}
	return rs
}

// TestSettleAmbientBulk judges the same paced line rectangles, each small:
// a few of them are set aside as ambient (a caret, a spinner), a screenful
// of them holds the settle, since together they are a change over most of
// the screen.
func TestSettleAmbientBulk(t *testing.T) {
	for _, c := range []struct {
		lines   int
		ambient bool
	}{{2, true}, {58, false}} {
		st := settleState{area: 1280 * 800, sources: map[sourceKey]*source{}, wake: make(chan struct{}, 1)}
		start := time.Now()
		var last time.Time
		for round := range 5 {
			last = start.Add(time.Duration(round) * 50 * time.Millisecond)
			for _, r := range lineRects(c.lines) {
				st.record(sourceKey{rect: r}, r.Dx()*r.Dy(), last)
			}
		}
		held, ambient := st.changes(start, false)
		got := st.lastChange(start, false)
		if c.ambient {
			if !got.IsZero() || held != 0 || ambient != 5*c.lines {
				t.Errorf("%d lines: last change %v, %d held, %d ambient; want all ambient", c.lines, got, held, ambient)
			}
			continue
		}
		if !got.Equal(last) || ambient != 0 || held != 5*c.lines {
			t.Errorf("%d lines: last change %v (want %v), %d held, %d ambient; want all held", c.lines, got, last, held, ambient)
		}
	}
}

// TestUnionArea counts once what overlapping rectangles cover.
func TestUnionArea(t *testing.T) {
	for _, c := range []struct {
		rs   []image.Rectangle
		want int
	}{
		{nil, 0},
		{[]image.Rectangle{image.Rect(0, 0, 10, 10)}, 100},
		{[]image.Rectangle{image.Rect(0, 0, 10, 10), image.Rect(0, 0, 10, 10)}, 100},
		{[]image.Rectangle{image.Rect(0, 0, 10, 10), image.Rect(5, 5, 15, 15)}, 175},
		{[]image.Rectangle{image.Rect(0, 0, 10, 10), image.Rect(20, 0, 30, 10)}, 200},
		{[]image.Rectangle{image.Rect(0, 0, 100, 10), image.Rect(40, 0, 60, 100), image.Rect(0, 90, 100, 100)}, 100*10 + 20*80 + 100*10},
		{[]image.Rectangle{image.Rect(3, 22, 1203, 776), image.Rect(39, 35, 1203, 48)}, 1200 * 754},
		{lineRects(58), 1200 * 13 * 58},
	} {
		if got := unionArea(c.rs, 1<<40); got != c.want {
			t.Errorf("unionArea(%v) = %d, want %d", c.rs, got, c.want)
		}
		if limit := c.want / 2; c.want > 0 {
			if got := unionArea(c.rs, limit); got <= limit || got > c.want {
				t.Errorf("unionArea(%v, %d) = %d, want over the limit and at most %d", c.rs, limit, got, c.want)
			}
		}
	}
}

// TestSettleScreenfulOfLines paints a screenful of small line rectangles
// over and over, as a terminal does that redraws its screen line by line,
// until the backend has seen each of them at a steady pace (alone, each
// would be ambient): the settle's judgement holds on them, they are not
// set aside.
func TestSettleScreenfulOfLines(t *testing.T) {
	s := newSession(t, nil, nil)
	if !s.b.damage.ok {
		t.Fatal("the X server has no DAMAGE extension")
	}
	lines := lineRects(58)
	w := s.window(windowSpec{r: image.Rect(0, 0, 1200, 13*len(lines)), bg: color.RGBA{0, 0, 0, 255}, override: true})
	gc, _ := xproto.NewGcontextId(s.client)
	xproto.CreateGC(s.client, gc, xproto.Drawable(w), 0, nil)
	st := &s.b.settle
	ctx := ctxT(t)
	start := time.Now()
	paced := func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, r := range lines {
			src := st.sources[sourceKey{rect: r}]
			if src == nil || !st.ambient(src, start, false) {
				return false
			}
		}
		return true
	}
	n := 0
	s.waitFor("every line paced", func() bool {
		n++
		xproto.ChangeGC(s.client, gc, xproto.GcForeground, []uint32{s.pixel(color.RGBA{uint8(n), 255 - uint8(n), 128, 255})})
		for _, r := range lines {
			xproto.PolyFillRectangle(s.client, xproto.Drawable(w), gc,
				[]xproto.Rectangle{{X: int16(r.Min.X), Y: int16(r.Min.Y), Width: uint16(r.Dx()), Height: uint16(r.Dy())}})
		}
		xproto.GetInputFocus(s.client).Reply() // flush, and the server has drawn
		// The backend's event loop has seen the round once its own
		// barrier comes back.
		id, ch := s.b.barrier()
		select {
		case <-ch:
		case <-ctx.Done():
			st.forget([]uint32{id})
			t.Fatal("the backend's barrier never came back")
		}
		return paced()
	})
	if last := st.lastChange(start, false); last.IsZero() {
		held, ambient := st.changes(start, false)
		t.Fatalf("a screenful of paced lines set aside as ambient (%d held, %d ambient)", held, ambient)
	}
	if held, ambient := st.changes(start, false); ambient != 0 {
		t.Fatalf("%d changes held, %d set aside as ambient; want none set aside", held, ambient)
	}
}

// TestSettlePatience: a browser's bounds are an idle machine's until a lag
// is known, then the most lagging browser's.
func TestSettlePatience(t *testing.T) {
	var st settleState
	if got := st.patience([]int{7}, paintWait); got != paintWait {
		t.Fatalf("no lag known: %v, want %v", got, paintWait)
	}
	lag := func(pid int, d time.Duration) time.Duration {
		return d + time.Duration(pid)*time.Second
	}
	st.lag.Store(&lag)
	if got := st.patience([]int{1, 3, 2}, idleWait); got != idleWait+3*time.Second {
		t.Errorf("three browsers: %v, want %v", got, idleWait+3*time.Second)
	}
	if got := st.patience(nil, idleWait); got != idleWait {
		t.Errorf("no browser: %v, want %v", got, idleWait)
	}
}
