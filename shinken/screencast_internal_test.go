package shinken

import (
	"context"
	"testing"
)

// TestTakeBack checks the rule a resume from another connection follows:
// a stream whose connection is over (its reader ended, its calls in
// flight not yet) is taken back for the resume; a stream whose connection
// still serves is not, nor one the resuming connection runs itself.
func TestTakeBack(t *testing.T) {
	for _, tt := range []struct {
		name      string
		ownerOver bool
		self      bool
		taken     bool
	}{
		{"owner over", true, false, true},
		{"owner serving", false, false, false},
		{"its own stream", false, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			octx, ocancel := context.WithCancel(context.Background())
			defer ocancel()
			owner, other := &conn{ctx: octx}, &conn{ctx: context.Background()}
			if tt.ownerOver {
				ocancel()
			}
			loopCtx, stopLoop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { <-loopCtx.Done(); close(done) }() // the stream's loop
			r := newCastRegistry()
			s := &castStream{id: "s1", owner: owner, cancel: stopLoop, done: done}
			r.streams[s.id] = s
			resumer := other
			if tt.self {
				resumer = owner
			}
			r.takeBack("s1", resumer)
			s.mu.Lock()
			taken := s.owner == nil
			s.mu.Unlock()
			if taken != tt.taken {
				t.Fatalf("taken %v, want %v", taken, tt.taken)
			}
			select {
			case <-done:
				if !tt.taken {
					t.Fatal("the stream's loop was stopped, but the stream not taken")
				}
			default:
				if tt.taken {
					t.Fatal("taken, but its loop still runs")
				}
				stopLoop()
			}
		})
	}
}
