package toolset

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/shinken/aci"
)

// The runtime bounds what one action may ask: a wait or a hold at its
// MaxWait (60 s by default, and the welcome does not say it; a longer one
// is refused), a key action
// at 256 combinations. A vendor's call may ask more. The toolsets never
// answer OK for less than was asked: a wait is made of as many waits as
// the runtime's bound takes, repeated keys and long scrolls of as many
// actions, and a hold, which cannot be split without releasing the key,
// is measured and refused once the runtime is found to hold less.

// Parts the runtime takes in one action.
const (
	combosPerAction  = 256
	notchesPerAction = 100
)

// wait waits d on the runtime, in parts the runtime takes: a runtime
// refuses a wait past its MaxWait (invalid_action), and the welcome does
// not say it, so a refused part is halved and the part remembered.
func (s *screen) wait(ctx context.Context, d time.Duration) error {
	start := time.Now()
	for {
		left := d - time.Since(start)
		if left <= 0 {
			return nil
		}
		part := min(left, s.waits.get())
		before := time.Now()
		err := s.do(ctx, &aci.Action{Verb: aci.VerbWait, MS: ceilMS(part)})
		if errors.Is(err, aci.ErrInvalidAction) && part > time.Millisecond {
			s.waits.below(part)
			continue
		}
		if err != nil {
			return err
		}
		if time.Since(before) < time.Millisecond && part >= time.Millisecond {
			// A runtime that waits no time at all: the rest is waited here.
			t := time.NewTimer(d - time.Since(start))
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// waitPart is the longest wait asked of the runtime in one action: 30 s
// (below the runtime's default MaxWait, 60 s) until the runtime refuses
// one, then half of the refused part.
type waitPart struct {
	mu   sync.Mutex
	part time.Duration
}

func (w *waitPart) get() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.part == 0 {
		return 30 * time.Second
	}
	return w.part
}

func (w *waitPart) below(refused time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = max(refused/2, time.Millisecond)
}

// holdCap is the longest hold a runtime was seen to make, once it made one
// shorter than asked; zero until then.
type holdCap struct {
	mu  sync.Mutex
	cap time.Duration
}

// hold holds keys (one combination) down for d. The hold is one key
// action; when the runtime releases the keys before d (its MaxWait is
// shorter), the call is an error naming the hold that was made, and later
// holds longer than it are refused before they start.
func (s *screen) hold(ctx context.Context, keys string, d time.Duration) error {
	s.held.mu.Lock()
	limit := s.held.cap
	s.held.mu.Unlock()
	if limit > 0 && d > limit {
		return fmt.Errorf("toolset: a hold of %s is longer than this runtime holds keys (%s, its MaxWait)", d, limit)
	}
	start := time.Now()
	if err := s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: keys, MS: ceilMS(d)}); err != nil {
		return err
	}
	if got := time.Since(start); got < d {
		got = got.Truncate(time.Millisecond)
		s.held.mu.Lock()
		s.held.cap = got
		s.held.mu.Unlock()
		return fmt.Errorf("toolset: the runtime released %s after %s, not %s: it holds keys for at most its MaxWait", keys, got, d)
	}
	return nil
}

// keys presses the key expression expr n times, in actions the runtime
// takes.
func (s *screen) keys(ctx context.Context, expr string, n int) error {
	per := len(strings.Fields(expr))
	batch := max(1, combosPerAction/per)
	for n > 0 {
		k := min(n, batch)
		if err := s.do(ctx, &aci.Action{Verb: aci.VerbKey, Keys: strings.TrimSpace(strings.Repeat(expr+" ", k))}); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// scrollNotches scrolls act's DX and DY in actions of at most
// notchesPerAction notches each; a fraction of a notch is left to the
// runtime, which rounds it (a small one to one notch).
func (s *screen) scrollNotches(ctx context.Context, act *aci.Action) error {
	dx, dy := act.DX, act.DY
	for {
		step := *act
		step.DX = clampAbs(dx, notchesPerAction)
		step.DY = clampAbs(dy, notchesPerAction)
		if err := s.do(ctx, &step); err != nil {
			return err
		}
		dx -= step.DX
		dy -= step.DY
		if math.Abs(dx) < 0.5 && math.Abs(dy) < 0.5 {
			return nil
		}
	}
}

func clampAbs(v, limit float64) float64 { return math.Copysign(min(math.Abs(v), limit), v) }

// ceilMS is d in whole milliseconds, rounded up, at least 1.
func ceilMS(d time.Duration) int {
	return max(1, int((d+time.Millisecond-1)/time.Millisecond))
}
