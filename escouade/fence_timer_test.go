package escouade_test

import (
	"testing"
	"time"

	"shinken.dev/go/escouade/protocol"
)

// TestTimerFences checks timer/*: 10 ms at least, 64 at once, a timer taken
// back never fires, and a timer's id is never given twice.
func TestTimerFences(t *testing.T) {
	h, _ := hookedHost(t, nil, nil, nil)
	v := newValidator(t)
	lp := startLinePlugin(t, h, v, "timers", "", "")
	var r struct{ Timer int64 }
	seen := map[int64]bool{}
	for i := range 64 {
		if err := lp.call("timer/set", map[string]any{"ms": 3_600_000}, &r); err != nil {
			t.Fatalf("timer %d: %v", i, err)
		}
		if seen[r.Timer] {
			t.Fatalf("timer id %d given twice", r.Timer)
		}
		seen[r.Timer] = true
	}
	wantCode(t, "a 65th timer", lp.call("timer/set", map[string]any{"ms": 10}, nil), protocol.CodeRefused)
	lp.notify("timer/cancel", map[string]any{"timer": r.Timer})
	// timer/cancel is a notification: a request sent after it may be
	// served before it.
	var short struct{ Timer int64 }
	var start time.Time
	waitFor(t, "a timer once one was taken back", func() bool {
		start = time.Now()
		return lp.call("timer/set", map[string]any{"ms": 0}, &short) == nil
	})
	n := lp.next(t, "timer/fired", nil)
	if num(n.params["timer"]) != short.Timer {
		t.Errorf("fired %v, want %d", n.params, short.Timer)
	}
	if d := time.Since(start); d < 10*time.Millisecond {
		t.Errorf("a timer of 0 ms fired after %v, before 10 ms", d)
	}
	wantCode(t, "ms not a number", lp.call("timer/set", map[string]any{"ms": "10"}, nil), protocol.CodeInvalidParams)
	wantCode(t, "no ms", lp.call("timer/set", map[string]any{}, nil), protocol.CodeInvalidParams)
	v.need(t, "result:timer/set", "timer/fired", "error:refused", "error:invalidParams")
}
