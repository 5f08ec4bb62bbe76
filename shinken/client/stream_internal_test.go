package client

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestExecStreamBounded feeds a stream faster than it is read: the
// connection's reader waits once maxExecQueued bytes are unread, goes on
// as Next makes room, and is let through when the connection closes.
func TestExecStreamBounded(t *testing.T) {
	s := &session{execs: map[string]*ExecStream{}}
	x := &ExecStream{}
	x.cond = sync.NewCond(&x.mu)
	s.execs["x1"] = x
	const chunk, n = 1 << 20, 10
	var pushed atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			s.execChunk("x1", uint64(i), "stdout", make([]byte, chunk))
			pushed.Add(1)
		}
	}()
	queued := func() int {
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.queued
	}
	// The reader fills the queue past the bound, then waits.
	deadline := time.Now().Add(time.Minute)
	for queued() <= maxExecQueued {
		if time.Now().After(deadline) {
			t.Fatal("the queue never filled")
		}
		time.Sleep(time.Millisecond) // polling the queue, within the hang guard
	}
	if got := queued(); got > maxExecQueued+chunk {
		t.Fatalf("%d bytes queued, bound %d", got, maxExecQueued)
	}
	if p := pushed.Load(); p == n {
		t.Fatal("the reader queued everything: no bound")
	}
	if _, err := x.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A closing connection lets it through.
	s.releaseExecs()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the reader is still waiting after the release")
	}
	if got := queued(); got != (n-1)*chunk {
		t.Fatalf("%d bytes queued after the release, want %d", got, (n-1)*chunk)
	}
}
