package engine

import (
	"testing"
	"time"
)

// TestTurnWatch checks a module's turn bound: waits are not counted, a
// turn past the limit is.
func TestTurnWatch(t *testing.T) {
	var said []string
	w := NewTurnWatch(time.Hour, func(why string) { said = append(said, why) })
	w.Begin()
	next := w.Wait() // the module waits: however long, it is not a turn
	w.fire()
	if len(said) > 0 {
		t.Fatalf("a wait counted as a turn: %s", said)
	}
	next()
	w.fire() // early: re-armed for what is left
	if len(said) > 0 {
		t.Fatalf("a turn within the limit was cut: %s", said)
	}
	w.mu.Lock()
	w.since = time.Now().Add(-2 * time.Hour)
	w.mu.Unlock()
	w.fire()
	if len(said) != 1 || said[0] == "" {
		t.Errorf("a turn past the limit: %q", said)
	}
	w.End()
	if NewTurnWatch(0, nil) != nil {
		t.Error("a zero limit watches")
	}
	var none *TurnWatch
	none.Begin()
	none.Wait()()
}
