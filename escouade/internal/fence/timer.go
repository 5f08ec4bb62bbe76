package fence

import (
	"context"
	"math"
	"time"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/jsonrpc"
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
	Timer int64 `json:"timer"`
}

func timerSet(_ context.Context, r *Instance, _ Call, params []byte) (any, error) {
	var ms float64
	seen, err := fields.Object(paramsObject(params), []string{"ms"}, false, func(_ int, v []byte) (err error) {
		if ms, err = jsonrpc.Number(v); err != nil {
			return fields.ErrWantNumber
		}
		return nil
	})
	if err == nil {
		err = fields.Require(seen, 1, []string{"ms"})
	}
	if err != nil {
		return nil, err
	}
	if math.IsNaN(ms) || ms > float64(maxTimer/time.Millisecond) {
		return nil, fields.Errorf("ms", "want at most %d ms", maxTimer/time.Millisecond)
	}
	d := max(time.Duration(ms*float64(time.Millisecond)), minTimer)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errorf(protocol.CodeRefused, "refused: the instance is ending")
	}
	if len(r.timers) >= maxTimers {
		return nil, errorf(protocol.CodeRefused, "refused: %d timers at once at most", maxTimers)
	}
	id := r.nextID()
	r.timers[id] = &timerEntry{t: time.AfterFunc(d, func() { r.fire(id) })}
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
	id, err := idParam(params, "timer")
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if t, ok := r.timers[id]; ok {
		t.t.Stop()
		delete(r.timers, id)
	}
	r.mu.Unlock()
	return nil, nil
}
