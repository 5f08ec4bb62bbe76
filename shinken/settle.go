package shinken

import (
	"context"
	"log/slog"
	"time"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/shinken/aci"
)

// Settled actions.
//
// Every request observes the effects of every action acked before it: a
// screenshot, an observe, the frame an action's observe-after-act brings
// and the next input action all see the UI after it handled the earlier
// input. The Runtime keeps that promise by settling before it acks: once
// a mutating verb has injected its input, and while it still holds the
// runtime-wide input lock, the Runtime asks the backend's [Settler] to
// wait until the UI has handled that input and is quiet, and only then
// sends the ack.
//
// Settling before the ack, rather than lazily before the next request, is
// deliberate: the ack then means "done and visible" for everything that
// looks, inside the protocol (every verb, every session, screencast frames)
// and outside it (a person watching, another tool reading the screen), with
// no read path that has to remember to wait; the input lock, held through
// the settle, orders the next input of every session after it. What an
// agent pays is the same either way, since an agent acts, then looks.

// SettleOutcome says how a settle ended.
type SettleOutcome string

// Settle outcomes.
const (
	SettleSync       SettleOutcome = "sync"        // input applies synchronously: nothing to wait for
	SettleQuiet      SettleOutcome = "quiet"       // the UI handled the input, then stayed quiet
	SettleCap        SettleOutcome = "cap"         // the UI was still changing when the cap passed
	SettleBestEffort SettleOutcome = "best_effort" // the backend cannot tell, and waited as well as it could
)

// A SettleReport says what one settle waited for.
type SettleReport struct {
	Outcome SettleOutcome
	Took    time.Duration // from the end of the injection to the end of the settle; the Runtime fills it in
	// Changes counts the changes that held the settle (damage, accessible
	// events); Ambient counts those it saw and set aside as periodic (a
	// blinking caret, a spinner).
	Changes, Ambient int
}

// A Settler knows when the UI has handled the input injected so far. The
// Runtime calls Settle after every mutating verb but clipboard_set, with
// the input lock held, before it acks. A backend without a Settler is
// taken to apply input synchronously (the headless desktop does): its
// actions are acked at once and reported as [SettleSync].
type Settler interface {
	// Settle returns once the UI has handled every input event injected
	// since start, and then been quiet, or once limit has passed since the
	// call (outcome [SettleCap]). Changes seen at or after start count,
	// even those that came before the call. An error means the backend
	// could not settle at all (its display is gone); the action's ack then
	// fails with that error.
	Settle(ctx context.Context, start time.Time, limit time.Duration) (SettleReport, error)
}

// The settle cap: RuntimeOptions.SettleCap defaults to defaultSettleCap and
// is clamped to [minSettleCap, maxSettleCap].
const (
	defaultSettleCap = 1500 * time.Millisecond
	minSettleCap     = 50 * time.Millisecond
	maxSettleCap     = 10 * time.Second
)

// settleCap returns the configured cap, defaulted and clamped.
func settleCap(d time.Duration) time.Duration {
	if d <= 0 {
		return defaultSettleCap
	}
	return max(minSettleCap, min(d, maxSettleCap))
}

// settle waits for the backend to settle the input injected since start,
// logs and reports it, also into rep when it is not nil. The caller holds
// the input lock.
func (rt *Runtime) settle(ctx context.Context, start time.Time, callID string, v aci.Verb, rep *SettleReport) error {
	r := SettleReport{Outcome: SettleSync}
	if rt.settler != nil {
		var err error
		r, err = rt.settler.Settle(ctx, start, rt.opts.SettleCap)
		if err != nil {
			return err
		}
	}
	r.Took = time.Since(start)
	if rt.log.Enabled(ctx, slog.LevelDebug) {
		rt.log.Debug("settled", logtext.String("call_id", callID), "verb", v, "outcome", r.Outcome, "took", r.Took,
			"changes", r.Changes, "ambient", r.Ambient)
	}
	rt.emit(Event{Kind: EventSettle, CallID: callID, Verb: v, Settle: r.Outcome, DurationMS: ms(r.Took),
		Changes: r.Changes, Ambient: r.Ambient})
	if rep != nil {
		*rep = r
	}
	return nil
}

// settled runs f, an element or window operation, with the input lock
// held, and settles what it did into rep. Input held by a person refuses
// it.
func (rt *Runtime) settled(ctx context.Context, callID string, v aci.Verb, rep *SettleReport, f func() error) error {
	if err := rt.departing.wait(ctx); err != nil {
		return err
	}
	rt.inputMu.Lock()
	defer rt.inputMu.Unlock()
	if err := rt.refuseHeld(v); err != nil {
		return err
	}
	start := time.Now()
	err := f()
	if serr := rt.settle(ctx, start, callID, v, rep); err == nil {
		err = serr
	}
	return err
}
