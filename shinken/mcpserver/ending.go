package mcpserver

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// How an MCP session over HTTP ends. The SDK's ServerSession.Close is
// graceful: it waits for the calls in flight to return before it closes
// anything. A call in flight may be an exec of ten minutes or a shell
// waiting five, and its client may be gone (an HTTP client that just
// leaves drops its POST, not the call): the session, its shell and its
// background commands then outlived a DELETE and the idle bound by as
// long. So every end the Server makes (DELETE, idle expiry, Close)
// cancels the session's calls first, then closes it; and the idle bound
// is the Server's own timer rather than the SDK's, which has no such
// step.

// errSessionEnded is the cause of a call cancelled by its session's end.
var errSessionEnded = errors.New("mcpserver: the MCP session ended")

// inFlight holds the cancel functions of the calls each MCP session has
// in flight.
type inFlight struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]map[*context.CancelCauseFunc]struct{}
}

// track is a receiving middleware that makes each request cancellable by
// its session's end.
func (f *inFlight) track(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		f.mu.Lock()
		if f.m == nil {
			f.m = map[*mcp.ServerSession]map[*context.CancelCauseFunc]struct{}{}
		}
		calls := f.m[ss]
		if calls == nil {
			calls = map[*context.CancelCauseFunc]struct{}{}
			f.m[ss] = calls
		}
		calls[&cancel] = struct{}{}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(calls, &cancel)
			if len(f.m[ss]) == 0 {
				delete(f.m, ss)
			}
			f.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// cancel cancels the calls ss has in flight.
func (f *inFlight) cancel(ss *mcp.ServerSession) {
	f.mu.Lock()
	var cancels []context.CancelCauseFunc
	for c := range f.m[ss] {
		cancels = append(cancels, *c)
	}
	f.mu.Unlock()
	for _, c := range cancels {
		c(errSessionEnded)
	}
}

// endSession cancels the calls ss has in flight, then closes it.
func (s *Server) endSession(ss *mcp.ServerSession) error {
	s.calls.cancel(ss)
	return ss.Close()
}

// session returns the live MCP session named id, or nil.
func (s *Server) session(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.srv.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// An idleBound ends the HTTP MCP sessions that send nothing for idle, a
// POST in flight counting as activity (the SDK's rule, which it
// replaces), and cancels a session's calls before a DELETE closes it.
type idleBound struct {
	s    *Server
	idle time.Duration

	mu sync.Mutex
	m  map[string]*idleSession // by Mcp-Session-Id
}

type idleSession struct {
	posts int // POSTs in flight
	timer *time.Timer
}

// handler sits after checkMessages, so that a POST without
// Mcp-Session-Id is an initialize.
func (b *idleBound) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		switch {
		case r.Method == http.MethodDelete:
			if ss := b.s.session(id); ss != nil {
				b.s.calls.cancel(ss)
			}
			next.ServeHTTP(w, r)
		case r.Method != http.MethodPost:
			next.ServeHTTP(w, r)
		case id == "":
			next.ServeHTTP(w, r)
			if ss := b.s.session(w.Header().Get(sessionIDHeader)); ss != nil {
				b.watch(ss)
			}
		default:
			b.post(id, +1)
			defer b.post(id, -1)
			next.ServeHTTP(w, r)
		}
	})
}

// watch starts ss's idle timer, and forgets ss once it has ended.
func (b *idleBound) watch(ss *mcp.ServerSession) {
	id := ss.ID()
	b.mu.Lock()
	if b.m == nil {
		b.m = map[string]*idleSession{}
	}
	b.m[id] = &idleSession{timer: time.AfterFunc(b.idle, func() { b.s.endSession(ss) })}
	b.mu.Unlock()
	go func() {
		ss.Wait()
		b.mu.Lock()
		if is := b.m[id]; is != nil {
			is.timer.Stop()
			delete(b.m, id)
		}
		b.mu.Unlock()
	}()
}

// post counts a POST of session id starting (+1) or ending (-1): the
// timer stops while one is in flight and starts again after the last.
func (b *idleBound) post(id string, d int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	is := b.m[id]
	if is == nil {
		return
	}
	is.posts += d
	switch {
	case d > 0 && is.posts == 1:
		is.timer.Stop()
	case d < 0 && is.posts == 0:
		is.timer.Reset(b.idle)
	}
}
