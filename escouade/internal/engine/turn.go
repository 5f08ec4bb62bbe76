package engine

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// A TurnWatch bounds a module's turns: the time it runs without waiting
// for its input, a call to the Host or a sleep. Past the limit, over is
// called (and ends the process). A nil *TurnWatch watches nothing.
type TurnWatch struct {
	limit time.Duration
	over  func(why string)

	mu      sync.Mutex
	running bool
	since   time.Time
	t       *time.Timer
}

func NewTurnWatch(limit time.Duration, over func(why string)) *TurnWatch {
	if limit <= 0 {
		return nil
	}
	return &TurnWatch{limit: limit, over: over}
}

// Begin starts a turn.
func (w *TurnWatch) Begin() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running, w.since = true, time.Now()
	if w.t == nil {
		w.t = time.AfterFunc(w.limit, w.fire)
	} else {
		w.t.Reset(w.limit)
	}
}

// End ends a turn.
func (w *TurnWatch) End() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running = false
	if w.t != nil {
		w.t.Stop()
	}
}

// Wait ends the turn, and returns what begins the next: the module waits.
func (w *TurnWatch) Wait() func() {
	w.End()
	return w.Begin
}

func (w *TurnWatch) fire() {
	w.mu.Lock()
	if !w.running {
		w.mu.Unlock()
		return
	}
	if left := w.limit - time.Since(w.since); left > 0 {
		w.t.Reset(left)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.over(fmt.Sprintf("it ran past %v without waiting for its input, a call or a sleep", w.limit))
}

// Reader returns r, read as a wait.
func (w *TurnWatch) Reader(r io.Reader) io.Reader { return turnReader{r: r, w: w} }

type turnReader struct {
	r io.Reader
	w *TurnWatch
}

func (t turnReader) Read(b []byte) (int, error) {
	defer t.w.Wait()()
	return t.r.Read(b)
}
