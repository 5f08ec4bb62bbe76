package shinken_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// gatedDesktop is the headless desktop with a Settler that holds each
// settle until the test releases it.
type gatedDesktop struct {
	*headless.Desktop
	entered chan struct{}
	release chan error
}

func (g *gatedDesktop) Settle(ctx context.Context, start time.Time, limit time.Duration) (shinken.SettleReport, error) {
	g.entered <- struct{}{}
	if err := <-g.release; err != nil {
		return shinken.SettleReport{}, err
	}
	return shinken.SettleReport{Outcome: shinken.SettleQuiet, Changes: 1}, nil
}

// settleRig serves b and hands onSettle the settle of each input action.
func settleRig(t *testing.T, b shinken.Backend, onSettle func(shinken.Event)) *client.Client {
	t.Helper()
	rec := shinken.RecorderFunc(func(e shinken.Event) {
		if e.Kind == shinken.EventSettle && e.Verb != "" {
			onSettle(e)
		}
	})
	return schematest.Serve(t, b, &shinken.RuntimeOptions{Recorder: rec})
}

// TestSettleBeforeAck: the ack of an input action waits for the backend's
// settle, which the hook then reports; a settle that fails fails the ack.
func TestSettleBeforeAck(t *testing.T) {
	desk := headless.New(nil)
	g := &gatedDesktop{Desktop: desk, entered: make(chan struct{}), release: make(chan error)}
	var mu sync.Mutex
	var got []shinken.Event
	c := settleRig(t, g, func(s shinken.Event) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	})
	ctx := t.Context()
	acked := make(chan error, 1)
	go func() { acked <- c.Click(ctx, aci.Px(10, 10)) }()
	<-g.entered
	select {
	case err := <-acked:
		t.Fatalf("acked (%v) before the settle ended", err)
	default:
	}
	g.release <- nil
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 1 || got[0].Verb != aci.VerbClick || got[0].Settle != shinken.SettleQuiet || got[0].Changes != 1 || got[0].DurationMS <= 0 {
		t.Fatalf("the settle events: %+v", got)
	}
	mu.Unlock()

	go func() { acked <- c.TypeText(ctx, "x") }()
	<-g.entered
	g.release <- aci.ErrClosed
	if err := <-acked; !errors.Is(err, aci.ErrClosed) {
		t.Fatalf("a failed settle acked %v", err)
	}
}

// TestSettleHeadlessSync: the headless desktop applies input synchronously
// and has no Settler; its actions settle as "sync", and the screenshot
// right after a click's ack shows the click.
func TestSettleHeadlessSync(t *testing.T) {
	desk := headless.New(nil)
	if err := desk.Launch(t.Context(), "form", nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []shinken.Event
	c := settleRig(t, desk, func(s shinken.Event) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	})
	ctx := t.Context()
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var box *aci.Element
	for i := range obs.Elements {
		if obs.Elements[i].Role == "check box" {
			box = &obs.Elements[i]
		}
	}
	if box == nil {
		t.Fatalf("no check box:\n%s", obs.TreeText)
	}
	before, err := c.Screenshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := c.Click(ctx, aci.Px(box.BBox[0]+box.BBox[2]/2, box.BBox[1]+box.BBox[3]/2)); err != nil {
			t.Fatal(err)
		}
		after, err := c.Screenshot(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if after.Hash == before.Hash {
			t.Fatalf("click %d: the screenshot right after the ack shows the old pixels", i)
		}
		before = after
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 5 {
		t.Fatalf("%d settles reported, want 5", len(got))
	}
	for _, s := range got {
		if s.Settle != shinken.SettleSync {
			t.Fatalf("headless settled %s, want sync", s.Settle)
		}
	}
}
