//go:build robotgo

package robotgo

import (
	"bytes"
	"context"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// settlePause is the pause between two captures of Settle: about a frame.
const settlePause = 16 * time.Millisecond

// Settle implements [shinken.Settler] as well as robotgo allows, which is
// not well: it has no way to know that an application handled an event,
// nor any change notification. It captures the screen until two captures
// about a frame apart match, or until limit, and reports
// [shinken.SettleBestEffort] (or [shinken.SettleCap]). An application that
// reacts later than that, or that only animates part of the screen, can
// still be seen before its reaction; a blinking caret can hold it to the
// cap. On Linux choose the x11 backend, which settles on events.
func (b *Backend) Settle(ctx context.Context, start time.Time, limit time.Duration) (shinken.SettleReport, error) {
	rep := shinken.SettleReport{Outcome: shinken.SettleBestEffort}
	deadline := time.Now().Add(limit)
	prev, err := b.Capture(ctx, aci.ScopeScreen)
	if err != nil {
		return rep, err
	}
	t := time.NewTimer(settlePause)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return rep, ctx.Err()
		}
		f, err := b.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			return rep, err
		}
		if f.Source == prev.Source && bytes.Equal(f.Image.Pix, prev.Image.Pix) {
			return rep, nil
		}
		rep.Changes++
		if !time.Now().Before(deadline) {
			rep.Outcome = shinken.SettleCap
			return rep, nil
		}
		prev = f
		t.Reset(min(settlePause, time.Until(deadline)))
	}
}

var _ shinken.Settler = (*Backend)(nil)
