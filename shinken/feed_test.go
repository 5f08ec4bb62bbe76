package shinken_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// next reads the subscription's next event of kind, skipping others.
func next(t *testing.T, s *shinken.Subscription, kind shinken.EventKind) shinken.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-s.Events():
			if !ok {
				t.Fatal("the subscription closed")
			}
			if e.Kind == kind {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}

func TestFeedEvents(t *testing.T) {
	feed := shinken.NewFeed()
	e := newEnv(t, &shinken.RuntimeOptions{Feed: feed})
	ctx := testCtx(t)
	if err := e.desk.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	sub := feed.Subscribe(0)
	defer sub.Close()
	c := e.dial(t, nil)

	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, sub, shinken.EventObservation)
	if ev.Revision != obs.Revision || ev.Bytes != len(obs.TreeText) || ev.Nodes != *obs.NodeCount || ev.TreeText != obs.TreeText ||
		ev.Session == "" || ev.Client == "" || ev.Seq == 0 || ev.Time.IsZero() {
		t.Errorf("observation event = %+v", ev)
	}
	if ev := next(t, sub, shinken.EventAction); ev.Verb != "observe" || !ev.OK || ev.DurationMS <= 0 {
		t.Errorf("observe's action event = %+v", ev)
	}

	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Click(ctx, aci.Ref(name.Ref)); err != nil {
		t.Fatal(err)
	}
	ev = next(t, sub, shinken.EventAction)
	if ev.Verb != "click" || ev.Target != name.Ref || !ev.OK || ev.Settle != shinken.SettleSync || ev.CallID == "" || ev.DurationMS < ev.SettleMS {
		t.Errorf("click event = %+v", ev)
	}
	x, y := 5.0, 5.0
	if err := c.Click(ctx, &aci.Target{Kind: aci.TargetPointPx, X: &x, Y: &y}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub, shinken.EventAction); ev.Target != "px 5,5" {
		t.Errorf("click at a point: target %q", ev.Target)
	}
	if err := c.Click(ctx, aci.Ref("e9999")); err == nil {
		t.Fatal("a click on an unknown ref succeeded")
	}
	ev = next(t, sub, shinken.EventAction)
	if ev.OK || !strings.HasPrefix(ev.Error, "stale_element_ref:") {
		t.Errorf("failed click event = %+v", ev)
	}

	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"sh", "-c", "exit 3"}}); err != nil {
		t.Fatal(err)
	}
	ev = next(t, sub, shinken.EventExec)
	if ev.ExitCode == nil || *ev.ExitCode != 3 || ev.OK || ev.Argv[0] != "sh" {
		t.Errorf("exec event = %+v", ev)
	}

	feed.Publish(shinken.Event{Kind: shinken.EventDecision, Verb: "exec", Detail: "policy: allowed"})
	if ev := next(t, sub, shinken.EventDecision); ev.Detail != "policy: allowed" {
		t.Errorf("decision event = %+v", ev)
	}
	if sub.Lost() != 0 || feed.Lost() != 0 {
		t.Errorf("lost %d/%d events with a reader keeping up", sub.Lost(), feed.Lost())
	}
}

// TestFeedStalledSubscriber: a subscriber that never reads loses events,
// counted, and the session goes on as if it were not there. An action's
// event follows its ack (see Feed), so the test waits for the live
// subscriber to hold every event, then closes the stalled one, which waits
// for a publish still under way: its count is then final.
func TestFeedStalledSubscriber(t *testing.T) {
	feed := shinken.NewFeed()
	e := newEnv(t, &shinken.RuntimeOptions{Feed: feed})
	ctx := testCtx(t)
	stalled := feed.Subscribe(1, shinken.EventAction)
	defer stalled.Close()
	live := feed.Subscribe(1000, shinken.EventAction)
	defer live.Close()
	c := e.dial(t, nil)
	const n = 100
	for range n {
		if err := c.Key(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if ev := next(t, live, shinken.EventAction); ev.Verb != "key" {
			t.Fatalf("event %d = %+v", i, ev)
		}
	}
	stalled.Close()
	stalled.Close()
	if got := stalled.Lost(); got != n-1 {
		t.Errorf("the stalled subscriber lost %d events, want %d", got, n-1)
	}
	if live.Lost() != 0 || len(live.Events()) != 0 {
		t.Errorf("the live subscriber lost %d and holds %d more events, want 0 and 0", live.Lost(), len(live.Events()))
	}
	if feed.Lost() != n-1 {
		t.Errorf("feed lost %d", feed.Lost())
	}
	if _, ok := <-stalled.Events(); !ok {
		t.Error("the closed subscription lost its buffered event")
	}
}

// TestFeedOrder: events published at once from many goroutines reach each
// subscriber with Seq rising, none lost with room to spare.
func TestFeedOrder(t *testing.T) {
	feed := shinken.NewFeed()
	const publishers, each = 8, 500
	subs := []*shinken.Subscription{feed.Subscribe(publishers * each), feed.Subscribe(publishers * each)}
	var wg sync.WaitGroup
	for range publishers {
		wg.Go(func() {
			for range each {
				feed.Publish(shinken.Event{Kind: shinken.EventDecision})
			}
		})
	}
	wg.Wait()
	for i, s := range subs {
		s.Close()
		var last uint64
		n := 0
		for e := range s.Events() {
			if e.Seq <= last {
				t.Fatalf("subscriber %d: Seq %d after %d", i, e.Seq, last)
			}
			last = e.Seq
			n++
		}
		if n != publishers*each || s.Lost() != 0 {
			t.Errorf("subscriber %d: %d events, %d lost, want %d and 0", i, n, s.Lost(), publishers*each)
		}
	}
}

func TestTakeover(t *testing.T) {
	feed := shinken.NewFeed()
	e := newEnv(t, &shinken.RuntimeOptions{Feed: feed})
	ctx := testCtx(t)
	if err := e.desk.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	sub := feed.Subscribe(0)
	defer sub.Close()
	c := e.dial(t, nil)
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatal(err)
	}

	tk, err := e.rt.TakeOver("ada")
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub, shinken.EventTakeover); !ev.Held || ev.By != "ada" {
		t.Errorf("takeover event = %+v", ev)
	}
	if by, held := e.rt.HeldBy(); !held || by != "ada" {
		t.Errorf("HeldBy = %q, %v", by, held)
	}
	if _, err := e.rt.TakeOver("bob"); !errors.Is(err, shinken.ErrInputHeld) {
		t.Errorf("a second takeover: %v", err)
	}
	// Every agent input is refused, with permission_denied naming the hold.
	for verb, act := range map[string]func() error{
		"click":         func() error { return c.Click(ctx, aci.Ref(name.Ref)) },
		"type_text":     func() error { return c.TypeText(ctx, "x") },
		"key":           func() error { return c.Key(ctx, "Return") },
		"set_value":     func() error { return c.SetValue(ctx, aci.Ref(name.Ref), "x") },
		"clipboard_set": func() error { return c.ClipboardSet(ctx, "x") },
	} {
		err := act()
		if !errors.Is(err, aci.ErrPermissionDenied) || !strings.Contains(err.Error(), "held by ada") {
			t.Errorf("%s while held: %v", verb, err)
		}
	}
	// Reads go on.
	if _, err := c.Observe(ctx, nil); err != nil {
		t.Errorf("observe while held: %v", err)
	}

	// The person's input reaches the desktop: click the entry, type.
	cx, cy := int(name.BBox[0]+name.BBox[2]/2), int(name.BBox[1]+name.BBox[3]/2)
	for _, k := range []shinken.PointerKind{shinken.PointerMove, shinken.PointerDown, shinken.PointerUp} {
		if err := tk.Pointer(ctx, shinken.PointerEvent{Kind: k, X: cx, Y: cy}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tk.Type(ctx, "Ada é✓日本"); err != nil {
		t.Fatal(err)
	}
	if err := tk.Keys(ctx, "BackSpace"); err != nil {
		t.Fatal(err)
	}
	if err := tk.Keys(ctx, "ctrl+frob"); err == nil {
		t.Error("a bad key expression was taken")
	}
	obs, err = c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if el, _ := obs.Find("text", "Name"); el.Value != "Ada é✓日" {
		t.Errorf("the person typed %q", el.Value)
	}
	// A button left pressed is released on hand back.
	if err := tk.Pointer(ctx, shinken.PointerEvent{Kind: shinken.PointerDown, X: 5, Y: 5}); err != nil {
		t.Fatal(err)
	}
	tk.Release()
	tk.Release()
	if ev := next(t, sub, shinken.EventTakeover); ev.Held || ev.By != "ada" {
		t.Errorf("hand back event = %+v", ev)
	}
	if err := tk.Type(ctx, "late"); !errors.Is(err, aci.ErrClosed) {
		t.Errorf("input after release: %v", err)
	}
	if err := c.TypeText(ctx, "!"); err != nil {
		t.Errorf("agent input after hand back: %v", err)
	}
	if _, held := e.rt.HeldBy(); held {
		t.Error("still held after release")
	}
}

// settleCounter is the headless desktop with a Settler that counts.
type settleCounter struct {
	*headless.Desktop
	n atomic.Int32
}

func (s *settleCounter) Settle(ctx context.Context, start time.Time, limit time.Duration) (shinken.SettleReport, error) {
	s.n.Add(1)
	return shinken.SettleReport{Outcome: shinken.SettleQuiet}, nil
}

// TestTakeoverSettlesOnRelease: the person's input is settled once, when
// they hand back, so that the agent's next action sees its effects.
func TestTakeoverSettlesOnRelease(t *testing.T) {
	d := &settleCounter{Desktop: headless.New(nil)}
	rt := shinken.NewRuntime(d, &shinken.RuntimeOptions{Token: "t", Logger: slog.New(slog.DiscardHandler)})
	defer rt.Close()
	tk, err := rt.TakeOver("")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := tk.Type(t.Context(), "x"); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.n.Load(); n != 0 {
		t.Errorf("%d settles before the hand back", n)
	}
	tk.Release()
	if n := d.n.Load(); n != 1 {
		t.Errorf("%d settles after the hand back, want 1", n)
	}
	// A takeover with no input has nothing to settle.
	tk, _ = rt.TakeOver("")
	tk.Release()
	if n := d.n.Load(); n != 1 {
		t.Errorf("%d settles after an empty takeover", n)
	}
}

// TestRecorderAndFeedAgree: a Recorder and a Feed's subscriber read one
// family of events, the same ones: sessions, actions, settles,
// screenshots, observations and execs alike.
func TestRecorderAndFeedAgree(t *testing.T) {
	feed := shinken.NewFeed()
	sub := feed.Subscribe(1024)
	defer sub.Close()
	var mu sync.Mutex
	var recorded []shinken.Event
	rec := shinken.RecorderFunc(func(e shinken.Event) {
		mu.Lock()
		defer mu.Unlock()
		recorded = append(recorded, e)
	})
	e := newEnv(t, &shinken.RuntimeOptions{Feed: feed, Recorder: rec})
	ctx := testCtx(t)
	if err := e.desk.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	c := e.dial(t, nil)
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Observe(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Key(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	e.rt.Close() // every event of its sessions has been recorded
	sub.Close()
	var fed []shinken.Event
	for ev := range sub.Events() {
		fed = append(fed, ev)
	}
	if sub.Lost() != 0 {
		t.Fatalf("the subscriber lost %d events", sub.Lost())
	}
	key := func(e shinken.Event) string {
		return fmt.Sprintf("%s %s %s %s %v", e.Kind, e.Verb, e.CallID, e.Outcome, e.OK)
	}
	keys := func(evs []shinken.Event) []string {
		out := make([]string, len(evs))
		for i, e := range evs {
			out[i] = key(e)
		}
		slices.Sort(out)
		return out
	}
	mu.Lock()
	got, want := keys(fed), keys(recorded)
	mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("the feed's events differ from the recorder's:\nfeed:     %q\nrecorder: %q", got, want)
	}
	kinds := map[shinken.EventKind]bool{}
	for _, e := range fed {
		kinds[e.Kind] = true
	}
	for _, k := range []shinken.EventKind{shinken.EventSessionOpened, shinken.EventSessionClosed, shinken.EventAction,
		shinken.EventSettle, shinken.EventScreenshot, shinken.EventObservation, shinken.EventExec} {
		if !kinds[k] {
			t.Errorf("no %s event in %q", k, got)
		}
	}
}
