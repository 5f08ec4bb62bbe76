//go:build robotgo

package robotgo

import (
	"testing"
	"time"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
)

// TestSettleBestEffort: on a still screen Settle reports best_effort at
// once, after a single pair of matching captures.
func TestSettleBestEffort(t *testing.T) {
	session(t, &xvfb.Options{Width: 640, Height: 480, NoWM: true})
	b := open(t)
	rep, err := b.Settle(ctxT(t), time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != shinken.SettleBestEffort || rep.Changes != 0 {
		t.Fatalf("Settle on a still screen = %+v", rep)
	}
}
