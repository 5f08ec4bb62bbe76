package shinken_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// recorder is a headless desktop that records the input events it gets,
// and can be told to fail a pointer press.
type recorder struct {
	*headless.Desktop
	mu       sync.Mutex
	events   []string
	at       []time.Time
	failDown bool
	moves    bool          // record pointer moves too
	logged   chan struct{} // receives after each event, coalesced
}

func (r *recorder) log(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
	r.at = append(r.at, time.Now())
	select {
	case r.logged <- struct{}{}:
	default:
	}
}

func (r *recorder) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	switch ev.Kind {
	case shinken.PointerDown:
		r.log(fmt.Sprintf("down %d", ev.Button))
		if r.failDown {
			return errors.New("the button is stuck")
		}
	case shinken.PointerUp:
		r.log(fmt.Sprintf("up %d", ev.Button))
	case shinken.PointerScroll:
		r.log(fmt.Sprintf("scroll %d %d", ev.DX, ev.DY))
	case shinken.PointerMove:
		if r.moves {
			r.log(fmt.Sprintf("move %d %d", ev.X, ev.Y))
		}
	}
	return r.Desktop.Pointer(ctx, ev)
}

func (r *recorder) Key(ctx context.Context, ev shinken.KeyEvent) error {
	if ev.Down {
		r.log("+" + ev.Key)
	} else {
		r.log("-" + ev.Key)
	}
	return r.Desktop.Key(ctx, ev)
}

func (r *recorder) take() ([]string, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, at := r.events, r.at
	r.events, r.at = nil, nil
	return ev, at
}

func newRecorder(t *testing.T) (*recorder, *client.Client, context.Context) {
	t.Helper()
	rec := &recorder{Desktop: headless.New(nil), logged: make(chan struct{}, 1)}
	c := schematest.Serve(t, rec, &shinken.RuntimeOptions{Logger: slog.New(slog.DiscardHandler)})
	return rec, c, testCtx(t)
}

// Keys held for a gesture go down before it and up after it, in reverse
// order; button picks the button.
func TestHeldKeysAndButtons(t *testing.T) {
	rec, c, ctx := newRecorder(t)
	at := aci.Px(100, 100)
	for _, tc := range []struct {
		act  aci.Action
		want []string
	}{
		{aci.Action{Verb: aci.VerbClick, Target: at, Keys: "ctrl+shift"},
			[]string{"+Control_L", "+Shift_L", "down 0", "up 0", "-Shift_L", "-Control_L"}},
		{aci.Action{Verb: aci.VerbClick, Target: at, Button: aci.PointerMiddle},
			[]string{"down 1", "up 1"}},
		{aci.Action{Verb: aci.VerbDoubleClick, Target: at, Button: aci.PointerRight, Keys: "alt"},
			[]string{"+Alt_L", "down 2", "up 2", "down 2", "up 2", "-Alt_L"}},
		{aci.Action{Verb: aci.VerbRightClick, Target: at, Keys: "shift"},
			[]string{"+Shift_L", "down 2", "up 2", "-Shift_L"}},
		{aci.Action{Verb: aci.VerbScroll, Target: at, Keys: "ctrl", DX: 2, DY: -1},
			[]string{"+Control_L", "scroll 2 -1", "-Control_L"}},
		{aci.Action{Verb: aci.VerbDrag, Target: at, To: aci.Px(200, 120), Keys: "shift", Button: aci.PointerMiddle},
			[]string{"+Shift_L", "down 1", "up 1", "-Shift_L"}},
		{aci.Action{Verb: aci.VerbMouseDown, Target: at, Keys: "super"},
			[]string{"+Super_L", "down 0"}},
		{aci.Action{Verb: aci.VerbMove, Target: aci.Px(150, 100)},
			nil},
		{aci.Action{Verb: aci.VerbMouseUp, Target: at},
			[]string{"up 0", "-Super_L"}},
		{aci.Action{Verb: aci.VerbMouseUp, Target: at},
			[]string{"up 0"}},
	} {
		if _, err := c.Do(ctx, &tc.act); err != nil {
			t.Fatalf("%+v: %v", tc.act, err)
		}
		if got, _ := rec.take(); !slices.Equal(got, tc.want) {
			t.Errorf("%s keys %q button %q: events %q, want %q", tc.act.Verb, tc.act.Keys, tc.act.Button, got, tc.want)
		}
	}
}

// A gesture that fails still releases the keys it held.
func TestHeldKeysReleasedOnError(t *testing.T) {
	rec, c, ctx := newRecorder(t)
	rec.failDown = true
	_, err := c.Do(ctx, &aci.Action{Verb: aci.VerbClick, Target: aci.Px(10, 10), Keys: "ctrl+alt"})
	if err == nil {
		t.Fatal("a click whose press failed was acked")
	}
	if got, _ := rec.take(); !slices.Equal(got, []string{"+Control_L", "+Alt_L", "down 0", "-Alt_L", "-Control_L"}) {
		t.Fatalf("events %q", got)
	}
	if _, err := c.Do(ctx, &aci.Action{Verb: aci.VerbMouseDown, Keys: "shift"}); err == nil {
		t.Fatal("a mouse_down whose press failed was acked")
	}
	if got, _ := rec.take(); !slices.Equal(got, []string{"+Shift_L", "down 0", "-Shift_L"}) {
		t.Fatalf("events %q", got)
	}
}

// Keys held with a button that was never released are released when the
// client goes.
func TestHeldKeysReleasedWhenTheClientLeaves(t *testing.T) {
	rec, c, ctx := newRecorder(t)
	if _, err := c.Do(ctx, &aci.Action{Verb: aci.VerbMouseDown, Target: aci.Px(5, 5), Keys: "ctrl+shift"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for {
		rec.mu.Lock()
		n := len(rec.events)
		rec.mu.Unlock()
		if n >= 6 {
			break
		}
		select {
		case <-rec.logged:
		case <-ctx.Done():
			t.Fatal("the held button and keys were not released")
		}
	}
	if got, _ := rec.take(); !slices.Equal(got, []string{"+Control_L", "+Shift_L", "down 0", "up 0", "-Shift_L", "-Control_L"}) {
		t.Fatalf("events %q", got)
	}
}

// keys on a move are held for the move (OpenAI's move with keys).
func TestMoveHoldsKeys(t *testing.T) {
	rec, c, ctx := newRecorder(t)
	rec.mu.Lock()
	rec.moves = true
	rec.mu.Unlock()
	if _, err := c.Do(ctx, &aci.Action{Verb: aci.VerbMove, Target: aci.Px(40, 30), Keys: "ctrl+shift"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := rec.take(); !slices.Equal(got, []string{"+Control_L", "+Shift_L", "move 40 30", "-Shift_L", "-Control_L"}) {
		t.Fatalf("events %q", got)
	}
}

// ms on a key holds the combination down that long.
func TestKeyHeldForMS(t *testing.T) {
	rec, c, ctx := newRecorder(t)
	if _, err := c.Do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: "shift+a", MS: 120}); err != nil {
		t.Fatal(err)
	}
	got, at := rec.take()
	if !slices.Equal(got, []string{"+Shift_L", "+a", "-a", "-Shift_L"}) {
		t.Fatalf("events %q", got)
	}
	if held := at[2].Sub(at[1]); held < 120*time.Millisecond {
		t.Fatalf("a held for %v, want at least 120ms", held)
	}
}

// Fields a verb cannot honour are refused with invalid_action, not acked
// and ignored; nothing reaches the backend.
func TestUnhonouredFieldsAreRefused(t *testing.T) {
	rec, c, ctx := newRecorder(t)
	at := aci.Px(10, 10)
	for _, a := range []aci.Action{
		{Verb: aci.VerbMove, Target: at, Keys: "shift ctrl"},
		{Verb: aci.VerbMouseUp, Keys: "shift"},
		{Verb: aci.VerbTypeText, Text: ptr("x"), Keys: "shift"},
		{Verb: aci.VerbClick, Target: at, Keys: "shift ctrl"},
		{Verb: aci.VerbRightClick, Target: at, Button: aci.PointerLeft},
		{Verb: aci.VerbScroll, Target: at, DY: 1, Button: aci.PointerMiddle},
		{Verb: aci.VerbScreenshot, Button: aci.PointerRight},
		{Verb: aci.VerbClick, Target: at, MS: 100},
		{Verb: aci.VerbClipboardSet, Text: ptr("x"), MS: 1},
		{Verb: aci.VerbClick, Target: at, DY: 3},
		{Verb: aci.VerbClick, Target: at, DurationMS: 100},
		{Verb: aci.VerbKey, Keys: "a", Target: at},
		{Verb: aci.VerbClick, Target: at, To: at},
		{Verb: aci.VerbClick, Target: at, Text: ptr("shift")},
		{Verb: aci.VerbClick, Target: at, Scope: aci.ScopeScreen},
		{Verb: aci.VerbObserve, Format: aci.FormatJPEG},
		{Verb: aci.VerbScreenshot, Delta: true},
		{Verb: aci.VerbStartScreencast, IfNoneMatch: "abc"},
	} {
		_, err := c.Do(ctx, &a)
		if !errors.Is(err, aci.ErrInvalidAction) {
			t.Errorf("%+v: %v, want invalid_action", a, err)
		}
	}
	if got, _ := rec.take(); len(got) != 0 {
		t.Fatalf("refused actions reached the backend: %q", got)
	}
}

func ptr[T any](v T) *T { return &v }

// A double click starts no sooner than 500 ms after the previous press, so
// applications count clicks as a person's; a click right after a double
// click at the same point continues the run (a triple click) and is not
// held back. (Backends whose applications need presses spaced in time, as
// X11's, space them themselves.)
func TestPressTiming(t *testing.T) {
	rec, c, ctx := newRecorder(t)
	at := aci.Px(50, 50)
	for _, a := range []aci.Action{
		{Verb: aci.VerbClick, Target: aci.Px(300, 300)},
		{Verb: aci.VerbDoubleClick, Target: at},
		{Verb: aci.VerbClick, Target: at},
	} {
		if _, err := c.Do(ctx, &a); err != nil {
			t.Fatal(err)
		}
	}
	events, at2 := rec.take()
	var downs []time.Time
	for i, e := range events {
		if e == "down 0" {
			downs = append(downs, at2[i])
		}
	}
	if len(downs) != 4 {
		t.Fatalf("events %q", events)
	}
	if gap := downs[1].Sub(downs[0]); gap < 500*time.Millisecond {
		t.Errorf("the double click began %v after the click before it, want at least 500ms", gap)
	}
	if gap := downs[3].Sub(downs[2]); gap >= 500*time.Millisecond {
		t.Errorf("the click after the double click was held back %v: it continues the run", gap)
	}
}
