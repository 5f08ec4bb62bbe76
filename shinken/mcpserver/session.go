package mcpserver

import (
	"context"
	"errors"
	"net"
	"slices"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
	"shinken.dev/go/shinken/toolset"
)

// aciSession is the ACI session the tools drive, with the Anthropic tools
// scaled to its screen.
type aciSession struct {
	c      *client.Client
	m      *machine.Tools // c's machine
	a      *toolset.Anthropic
	opened time.Time // when its dial completed
}

// newSession puts the Anthropic tools on c (which asks the runtime for the
// screen's size).
func (s *Server) newSession(ctx context.Context, c *client.Client) (*aciSession, error) {
	a, err := toolset.NewAnthropic(ctx, c, &toolset.AnthropicOptions{
		Version: toolset.ComputerToolset20260801, Width: s.opts.Screen.W, Height: s.opts.Screen.H,
	})
	if err != nil {
		return nil, err
	}
	return &aciSession{c: c, m: machine.New(c, nil), a: a, opened: time.Now()}, nil
}

// current returns the session the tools drive now.
func (s *Server) current() *aciSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Reconnect makes sure the tools run on an ACI session opened after it was
// called: unless the Server already replaced its session since, it opens a
// new one with Options.Dial (an error without it). A program calls it when
// it knows the session is about to end or has ended: it rotated the
// runtime's token, or restarted the desktop behind it. Calls in flight on
// the old session end as it ends; the tools run on the new one from now
// on. A session the Server dialled itself is closed once replaced; the one
// given to New stays the caller's.
//
// The Server also reconnects by itself when a call finds its session
// closed by the runtime: a reading tool's call (screenshot, observe...) is
// then made again on the new session, and any other fails with a closed
// error, as it may or may not have taken effect. Either way the runtime
// numbers elements anew: refs from before are stale, observe again.
func (s *Server) Reconnect(ctx context.Context) error {
	asOf := time.Now()
	s.redial.Lock()
	cur := s.current()
	s.redial.Unlock()
	if cur.opened.After(asOf) {
		return nil
	}
	_, err := s.renew(ctx, cur)
	return err
}

var (
	errNoDial       = errors.New("mcpserver: no Options.Dial to open a new ACI session with")
	errServerClosed = aci.Errorf(aci.CodeClosed, "the MCP server is closed")
)

// renew replaces stale, unless another call did already, and returns the
// session to use.
func (s *Server) renew(ctx context.Context, stale *aciSession) (*aciSession, error) {
	if s.opts.Dial == nil {
		return nil, errNoDial
	}
	s.redial.Lock()
	defer s.redial.Unlock()
	s.mu.Lock()
	cur, closed := s.cur, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return nil, errServerClosed
	case cur != stale:
		return cur, nil
	}
	c, err := s.opts.Dial(ctx)
	if err != nil {
		return nil, err
	}
	next, err := s.newSession(ctx, c)
	if err != nil {
		c.Close()
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return nil, errServerClosed
	}
	s.cur = next
	var old *client.Client
	if i := slices.Index(s.dialled, stale.c); i >= 0 {
		old = stale.c
		s.dialled = slices.Delete(s.dialled, i, i+1)
	}
	s.dialled = append(s.dialled, c)
	s.mu.Unlock()
	s.log.Info("ACI session replaced")
	if old != nil {
		old.Close()
	}
	return next, nil
}

// run runs fn on the current session. When the runtime closed that
// session, it opens a new one (with Options.Dial) and, for a call that
// only reads (retry), runs fn again on it; any other call fails, saying
// so.
func (s *Server) run(ctx context.Context, retry bool, fn func(*aciSession) error) error {
	cur := s.current()
	err := fn(cur)
	if err == nil || s.opts.Dial == nil || ctx.Err() != nil || !sessionLost(err) {
		return err
	}
	next, rerr := s.renew(ctx, cur)
	switch {
	case rerr != nil:
		return aci.Errorf(aci.CodeClosed, "the runtime closed the session (%v), and a new one could not be opened: %w", err, rerr)
	case !retry:
		return &aci.Error{Code: aci.CodeClosed, Err: err,
			Detail: "the runtime closed the session during the call, which may or may not have taken effect; the next call runs on a new session (observe again: refs from before are stale)"}
	}
	return fn(next)
}

// sessionLost says whether err is a call's failure because its session
// ended: the runtime closed it, or the connection broke while the call
// was being sent.
func sessionLost(err error) bool {
	var ce websocket.CloseError
	var own ownSessionError
	if errors.As(err, &own) {
		return false
	}
	return aci.CodeOf(err) == aci.CodeClosed || errors.Is(err, net.ErrClosed) || errors.As(err, &ce)
}

// ownSessionError is the failure of a call made on a session of its own
// (exec and hold_key with Options.Dial): that session's end says nothing
// of the Server's.
type ownSessionError struct{ err error }

func (e ownSessionError) Error() string { return e.err.Error() }
func (e ownSessionError) Unwrap() error { return e.err }

// own marks err as a failure on a session of the call's own.
func own(err error) error {
	if err == nil {
		return nil
	}
	return ownSessionError{err}
}
