package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"shinken.dev/go/shinken"
)

// A Desktop is what a daemon serves: a backend, how to check the parts
// behind it, and how to close it.
type Desktop struct {
	// Backend is the desktop's backend (required).
	Backend shinken.Backend
	// Check, when set, says whether the parts behind Backend answer (a
	// supervised X session, its buses): it is the readiness check named
	// "desktop". Return a NotReady error to say which part and why.
	Check func(ctx context.Context) error
	// Close, when set, closes Backend; it is called once, after the
	// sessions and the plugins stopped, or when a Swap replaces it.
	Close func()
	// AppsAsAgent, when set, returns nil if the desktop starts the agent's
	// applications (launch_app, its startup apps) as Options.AgentUser,
	// else why it starts them as the daemon's user, which makes /readyz
	// unready under Options.RequireAgentUser.
	AppsAsAgent func() error
	// Done, when set, is closed when the desktop fails for good (a
	// supervised session gave up): Run then stops the daemon. A Swap
	// keeps the first desktop's Done.
	Done <-chan struct{}
}

func (d Desktop) closeIt() {
	if d.Close != nil {
		d.Close()
	}
}

// served is the ACI endpoint: the Runtime of the current desktop, which a
// Swap replaces.
type served struct {
	opts shinken.RuntimeOptions // every Runtime's; Token follows setToken
	log  *slog.Logger
	done <-chan struct{}

	mu        sync.Mutex
	rt        *shinken.Runtime
	desk      Desktop
	swapping  bool // a new desktop is being opened
	draining  bool
	followers []func() // see follow
}

func newServed(d Desktop, opts shinken.RuntimeOptions, log *slog.Logger) *served {
	s := &served{opts: opts, log: log, desk: d, done: d.Done}
	s.rt = shinken.NewRuntime(d.Backend, &s.opts)
	return s
}

func (s *served) current() *shinken.Runtime {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rt
}

// failed is closed when the desktop fails for good; nil never is.
func (s *served) failed() <-chan struct{} { return s.done }

// ServeHTTP serves the ACI with the current Runtime.
func (s *served) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.current().ServeHTTP(w, r)
}

// setToken rotates the token of the current Runtime (closing the sessions
// opened with the old one) and of the Runtimes to come.
func (s *served) setToken(token string) {
	s.mu.Lock()
	s.opts.Token = token
	rt := s.rt
	s.mu.Unlock()
	rt.SetToken(token)
	s.changed()
}

// follow has f called after every token change and desktop swap, once the
// new token or Runtime serves: the daemon's own sessions (MCP's) reconnect
// from it. On a swap f runs before the old Runtime closes its sessions.
func (s *served) follow(f func()) {
	s.mu.Lock()
	s.followers = append(s.followers, f)
	s.mu.Unlock()
}

func (s *served) changed() {
	s.mu.Lock()
	fs := slices.Clone(s.followers)
	s.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// token returns the current token.
func (s *served) token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Token
}

// state is what readiness needs to know at once.
func (s *served) state() (draining, swapping bool, rt *shinken.Runtime, d Desktop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining || s.rt.Draining(), s.swapping, s.rt, s.desk
}

// Swap replaces the daemon's desktop with the one open returns. The daemon
// is unready while open runs; then new sessions get the new desktop's
// Runtime, the daemon's own (MCP's) reconnect to it, and the old Runtime's
// are closed with the code telling a client to reconnect, before the old
// desktop closes. If open fails, Swap returns its error and the daemon
// stays unready with the old desktop. During a drain the new one closes.
func (d *Daemon) Swap(open func() (Desktop, error)) error {
	return d.served.swap(open, d.ready.kick)
}

func (s *served) swap(open func() (Desktop, error), kick func()) error {
	s.mu.Lock()
	s.swapping = true
	s.mu.Unlock()
	kick()
	nd, err := open()
	if err != nil {
		s.log.Error("reopening the desktop failed: not ready", "err", err)
		return err
	}
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		nd.closeIt()
		return nil
	}
	old, oldDesk := s.rt, s.desk
	s.rt = shinken.NewRuntime(nd.Backend, &s.opts)
	s.desk = nd
	s.swapping = false
	s.mu.Unlock()
	kick()
	s.changed()
	// 1012 "desktop restarted: reconnect", not 1001: the clients come back.
	old.CloseRestarted()
	oldDesk.closeIt()
	s.log.Info("desktop reopened: the sessions on the old one were closed")
	return nil
}

// drain refuses new sessions, waits for the calls in flight (at most
// timeout) and closes every session with 1001.
func (s *served) drain(timeout time.Duration) {
	s.mu.Lock()
	s.draining = true
	rt := s.rt
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := rt.Drain(ctx); err != nil {
		s.log.Warn("drain deadline passed: closing the sessions with calls in flight", "timeout", timeout)
	}
}

// closeRuntime closes the current Runtime: its sessions, and the commands
// they run.
func (s *served) closeRuntime() {
	s.mu.Lock()
	s.draining = true
	rt := s.rt
	s.mu.Unlock()
	rt.Close()
}

// closeDesktop closes the current desktop; after closeRuntime.
func (s *served) closeDesktop() {
	s.mu.Lock()
	d := s.desk
	s.desk = Desktop{}
	s.mu.Unlock()
	d.closeIt()
}
