package fence

import (
	"context"
	"math"
	"time"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
)

// The fences of timer/*.
const (
	maxTimers = 64                    // timers at once
	minTimer  = 10 * time.Millisecond // a shorter one is this long
	maxTimer  = 366 * 24 * time.Hour  // a longer one is not a timer but a mistake
)

type timerEntry struct{ t *time.Timer }

// timerSetResult is the answer to timer/set.
type timerSetResult struct {
	Timer int64 `json:"timer"`
}

// timerParams is the params of timer/fired and timer/cancel.
type timerParams struct {
	Timer int64 `json:"timer" wire:"required"`
}

func timerSet(_ context.Context, r *Instance, c Call, params []byte) (any, error) {
	var tp struct {
		MS float64 `json:"ms" wire:"required"`
	}
	if err := decodeParams(params, &tp); err != nil {
		return nil, err
	}
	ms := tp.MS
	if math.IsNaN(ms) || ms > float64(maxTimer/time.Millisecond) {
		return nil, fields.Errorf("ms", "want at most %d ms", maxTimer/time.Millisecond)
	}
	d := max(time.Duration(ms*float64(time.Millisecond)), minTimer)
	// The plugin knows the timer by the id its answer gives: a timer that
	// came due before the answer was written (10 ms, on a loaded machine)
	// would name a timer the plugin does not know yet, and be lost.
	afterAnswer := c.AfterAnswer()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errorf(protocol.CodeRefused, "refused: the instance is ending")
	}
	if len(r.timers) >= maxTimers {
		return nil, errorf(protocol.CodeRefused, "refused: %d timers at once at most", maxTimers)
	}
	id := r.nextID()
	r.timers[id] = &timerEntry{t: time.AfterFunc(d, func() {
		afterAnswer(r.ctx)
		r.fire(id)
	})}
	return timerSetResult{Timer: id}, nil
}

// fire tells the plugin that a timer came due, unless it was taken back.
func (r *Instance) fire(id int64) {
	r.mu.Lock()
	_, ok := r.timers[id]
	delete(r.timers, id)
	r.mu.Unlock()
	if ok {
		r.notify("timer/fired", timerParams{Timer: id})
	}
}

func timerCancel(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var tp timerParams
	if err := decodeParams(params, &tp); err != nil {
		return nil, err
	}
	id := tp.Timer
	r.mu.Lock()
	if t, ok := r.timers[id]; ok {
		t.t.Stop()
		delete(r.timers, id)
	}
	r.mu.Unlock()
	return nil, nil
}
