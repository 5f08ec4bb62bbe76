package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Paths the daemon serves besides the page. The deploy manifests name
// them; a test checks that they agree.
const (
	pathACI     = "/aci"
	pathHealthz = "/healthz"
	pathReadyz  = "/readyz"
	pathMetrics = "/metrics"
)

// desktop is what the daemon serves: a backend, how to check that it is
// ready beyond capturing a frame, and how to close it.
type desktop struct {
	backend shinken.Backend
	// check, when set, says whether the parts behind the backend (a
	// supervised X session, its buses) answer.
	check func(ctx context.Context) error
	close func()
}

// served is the ACI endpoint: the Runtime of the current desktop, which a
// desktop restart replaces, and the daemon's health.
type served struct {
	opts shinken.RuntimeOptions // every Runtime's; Token follows setToken
	log  *slog.Logger

	mu        sync.Mutex
	rt        *shinken.Runtime
	desk      desktop
	swapping  bool // a new desktop is being opened
	draining  bool
	followers []func() // see follow
}

func newServed(d desktop, opts shinken.RuntimeOptions, log *slog.Logger) *served {
	s := &served{opts: opts, log: log, desk: d}
	s.rt = shinken.NewRuntime(d.backend, &s.opts)
	return s
}

func (s *served) current() *shinken.Runtime {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rt
}

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

// swapStarted marks the desktop as being replaced: not ready until swap.
func (s *served) swapStarted() {
	s.mu.Lock()
	s.swapping = true
	s.mu.Unlock()
}

// swap serves d from now on: new sessions get a Runtime of d; the old
// Runtime's sessions are closed with 1001 (the desktop they saw is gone)
// and the old desktop is closed.
func (s *served) swap(d desktop) {
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		d.close()
		return
	}
	old, oldDesk := s.rt, s.desk
	s.rt = shinken.NewRuntime(d.backend, &s.opts)
	s.desk = d
	s.swapping = false
	s.mu.Unlock()
	s.changed()
	old.Close()
	oldDesk.close()
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

// closeDesktop closes the current desktop; after drain.
func (s *served) closeDesktop() {
	s.mu.Lock()
	d := s.desk
	s.desk = desktop{close: func() {}}
	s.mu.Unlock()
	d.close()
}

// ready says why the daemon is not ready, or nil: it must not be draining
// or replacing its desktop, the desktop's parts must answer, and the
// backend must capture a frame.
func (s *served) ready(ctx context.Context) error {
	s.mu.Lock()
	draining, swapping, rt, d := s.draining, s.swapping, s.rt, s.desk
	s.mu.Unlock()
	switch {
	case draining || rt.Draining():
		return errors.New("draining")
	case swapping:
		return errors.New("the desktop is being reopened after a restart")
	}
	if d.check != nil {
		if err := d.check(ctx); err != nil {
			return err
		}
	}
	if c, ok := d.backend.(shinken.Capturer); ok {
		if _, err := c.Capture(ctx, aci.ScopeScreen); err != nil {
			return errors.New("the backend captures no frame: " + err.Error())
		}
	}
	return nil
}

// readiness is the JSON body of /readyz.
type readiness struct {
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
}

// readyz answers 200 when ready, else 503 with the reason.
func (s *served) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	body, code := readiness{Ready: true}, http.StatusOK
	if err := s.ready(ctx); err != nil {
		body, code = readiness{Reason: err.Error()}, http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

// healthz answers 200 while the process serves HTTP: it is alive.
func healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(`{"alive":true}` + "\n"))
}
