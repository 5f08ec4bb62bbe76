package shinken

import (
	"context"

	"github.com/coder/websocket"
	"shinken.dev/go/shinken/aci"
)

// drainState counts the calls being handled, so that Drain can wait for
// them. Guarded by Runtime.drainMu.
type drainState struct {
	draining bool
	inflight int
	quiet    chan struct{} // closed when inflight drops to 0 during a drain
}

// admit counts a new call in, or reports false while draining.
func (rt *Runtime) admit() bool {
	rt.drainMu.Lock()
	defer rt.drainMu.Unlock()
	if rt.drain.draining {
		return false
	}
	rt.drain.inflight++
	return true
}

// callDone counts a call out.
func (rt *Runtime) callDone() {
	rt.drainMu.Lock()
	defer rt.drainMu.Unlock()
	rt.drain.inflight--
	if rt.drain.inflight == 0 && rt.drain.quiet != nil {
		close(rt.drain.quiet)
		rt.drain.quiet = nil
	}
}

// errDraining answers the calls that arrive during a drain.
var errDraining = aci.Errorf(aci.CodeClosed, "the runtime is draining: it takes no new calls")

// Drain shuts the Runtime down gently, for a SIGTERM: from the moment it is
// called, Draining reports true, a new connection is refused with HTTP 503
// (a hello never gets through), and a call arriving on an open session is
// answered with ok=false and the code "closed". Drain then waits until the
// calls already being handled have been answered (a streamed exec, until
// it exits), or until ctx ends, and closes the Runtime as Close does: every
// session gets 1001 (going away). It returns ctx's error when the deadline
// cut the wait short.
func (rt *Runtime) Drain(ctx context.Context) error {
	rt.drainMu.Lock()
	rt.drain.draining = true
	var quiet chan struct{}
	if rt.drain.inflight > 0 {
		if rt.drain.quiet == nil {
			rt.drain.quiet = make(chan struct{})
		}
		quiet = rt.drain.quiet
	}
	rt.drainMu.Unlock()
	var err error
	if quiet != nil {
		select {
		case <-quiet:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	// The last replies are queued; the close frame must not overtake them.
	rt.mu.Lock()
	live := make([]*conn, 0, len(rt.live))
	for c := range rt.live {
		live = append(live, c)
	}
	rt.mu.Unlock()
	for _, c := range live {
		c.waitFlushed(ctx)
	}
	rt.Close()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// The close of the sessions a Runtime ends with CloseRestarted: unlike
// 1001 (the runtime is going away), the desktop was replaced and a new one
// is served at once: reconnect, and observe again.
const (
	StatusDesktopRestarted = websocket.StatusServiceRestart // 1012
	ReasonDesktopRestarted = "desktop restarted: reconnect"
)

// CloseRestarted closes the Runtime as Close does, after the program
// restarted its desktop and serves a new Runtime: sessions end with
// StatusDesktopRestarted instead of 1001, so that clients reconnect.
func (rt *Runtime) CloseRestarted() error {
	rt.closeWhy.CompareAndSwap(nil, &closeErr{code: StatusDesktopRestarted, reason: ReasonDesktopRestarted})
	return rt.Close()
}

// closeReason is how the Runtime's closing ends its sessions: 1001, or
// what CloseRestarted set.
func (rt *Runtime) closeReason() *closeErr {
	if why := rt.closeWhy.Load(); why != nil {
		return why
	}
	return &closeErr{code: websocket.StatusGoingAway, reason: "runtime shutting down"}
}

// waitFlushed waits until the writer has sent everything queued, the
// connection is over, or ctx ends.
func (c *conn) waitFlushed(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		c.qmu.Lock()
		c.qcond.Broadcast()
		c.qmu.Unlock()
	})
	defer stop()
	c.qmu.Lock()
	defer c.qmu.Unlock()
	for c.queued > 0 && ctx.Err() == nil && !c.over.Load() {
		c.qcond.Wait()
	}
}

// Draining reports whether Drain (or Close) has been called: a readiness
// probe should then say not ready.
func (rt *Runtime) Draining() bool {
	rt.drainMu.Lock()
	defer rt.drainMu.Unlock()
	return rt.drain.draining || rt.closed.Load()
}
