package jsonrpc

import (
	"context"
	"sync"
	"time"
)

// A handlerContext is a handler's context: its parent's values and
// cancellation, and a deadline. Unlike context.WithDeadline it starts no
// timer until somebody asks for Done: starting one wakes a thread when none
// waits in the runtime's poller, which costs a short request more than the
// rest of its work, and most handlers finish without ever waiting on their
// context. Err reports the deadline from the clock either way.
type handlerContext struct {
	parent   context.Context
	deadline time.Time

	mu   sync.Mutex
	done chan struct{} // made by the first Done
	err  error         // set once, when done
	stop func()        // stops what Done started
}

func newHandlerContext(parent context.Context, deadline time.Time) *handlerContext {
	return &handlerContext{parent: parent, deadline: deadline}
}

func (h *handlerContext) Deadline() (time.Time, bool) { return h.deadline, true }

func (h *handlerContext) Value(key any) any { return h.parent.Value(key) }

func (h *handlerContext) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.errLocked()
}

func (h *handlerContext) errLocked() error {
	if h.err != nil {
		return h.err
	}
	if err := h.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(h.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (h *handlerContext) Done() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done != nil {
		return h.done
	}
	h.done = make(chan struct{})
	if err := h.errLocked(); err != nil {
		h.err = err
		close(h.done)
		return h.done
	}
	t := time.AfterFunc(time.Until(h.deadline), func() { h.cancel(context.DeadlineExceeded) })
	stopParent := context.AfterFunc(h.parent, func() { h.cancel(h.parent.Err()) })
	h.stop = func() {
		t.Stop()
		stopParent()
	}
	return h.done
}

func (h *handlerContext) cancel(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return
	}
	h.err = err
	if h.done != nil {
		close(h.done)
	}
	if h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// release ends the context once its handler has returned, as a
// context.CancelFunc would.
func (h *handlerContext) release() { h.cancel(context.Canceled) }
