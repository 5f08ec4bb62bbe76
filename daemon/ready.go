package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// A Check is one readiness check. Func runs in the background (every
// Options.ReadyInterval and after a Swap), never per probe, within 5 s.
type Check struct {
	// Name names the part checked ("accessibility bus", "database"): the
	// unauthenticated /readyz names it, never the error's detail.
	Name string
	// Func says why the part is not ready, or nil: a NotReadyError in
	// words for /readyz; any other error's text goes only to the log.
	Func func(ctx context.Context) error
}

// NotReadyError says in words which part of a desktop is not ready and
// why, for /readyz, which anyone may read; Err holds the detail (a
// process's stderr, addresses), which only the log gets.
type NotReadyError struct {
	Part string // "the X server", "the accessibility bus"
	Why  string // "does not answer", "is restarting"
	Err  error
}

// NotReady returns a *NotReadyError.
func NotReady(part, why string, err error) error {
	return &NotReadyError{Part: part, Why: why, Err: err}
}

// Error says which part, why, and the detail.
func (e *NotReadyError) Error() string {
	s := e.Part + " " + e.Why
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the detail.
func (e *NotReadyError) Unwrap() error { return e.Err }

// publicReason is what /readyz says of err from the check named part.
func publicReason(part string, err error) string {
	var nr *NotReadyError
	if errors.As(err, &nr) {
		return nr.Part + " " + nr.Why
	}
	return part + " is not ready (the daemon's log says why)"
}

// readinessBody is the JSON body of /readyz.
type readinessBody struct {
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
}

// readiness keeps /readyz's answer up to date in the background, so that
// a probe costs a load and a write whatever the load.
type readiness struct {
	served   *served
	checks   []Check
	interval time.Duration
	log      *slog.Logger

	noToken  bool // ready before a token is loaded (Options.ReadyWithoutToken)
	draining atomic.Bool
	last     atomic.Pointer[string] // the checks' last reason, "" when ready
	kickc    chan struct{}
	cancel   context.CancelFunc // ends the checks
	done     chan struct{}
	mu       sync.Mutex // one run of the checks at a time
	lastLog  string     // the detail last logged
}

func newReadiness(s *served, extra []Check, interval time.Duration, log *slog.Logger) *readiness {
	if interval <= 0 {
		interval = time.Second
	}
	checks := []Check{{Name: "the desktop", Func: desktopCheck(s)}}
	checks = append(checks, extra...)
	r := &readiness{served: s, checks: checks, interval: interval, log: log,
		kickc: make(chan struct{}, 1), done: make(chan struct{})}
	starting := "the daemon is starting"
	r.last.Store(&starting)
	return r
}

// desktopCheck is the daemon's own check: the desktop's Check, and a
// captured frame.
func desktopCheck(s *served) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, _, _, d := s.state()
		if d.Check != nil {
			if err := d.Check(ctx); err != nil {
				return err
			}
		}
		if c, ok := d.Backend.(shinken.Capturer); ok {
			if _, err := c.Capture(ctx, aci.ScopeScreen); err != nil {
				return NotReady("the desktop", "captures no frame", err)
			}
		}
		return nil
	}
}

// start runs the checks once (so that the daemon's first answer is a real
// one), then every interval until stop.
func (r *readiness) start(ctx context.Context) {
	r.runChecks(ctx)
	bg, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		t := time.NewTicker(r.interval)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
			case <-r.kickc:
			}
			r.runChecks(bg)
		}
	}()
}

// runChecks runs every check and keeps the first failure's reason.
func (r *readiness) runChecks(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reason, detail := "", ""
	for _, c := range r.checks {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Func(cctx)
		cancel()
		if err != nil {
			reason, detail = publicReason(c.Name, err), c.Name+": "+err.Error()
			break
		}
	}
	r.last.Store(&reason)
	if detail != r.lastLog {
		if detail != "" {
			r.log.Warn("not ready", "reason", reason, "detail", detail)
		} else if r.lastLog != "" {
			r.log.Info("ready again")
		}
		r.lastLog = detail
	}
}

// kick runs the checks again soon.
func (r *readiness) kick() {
	select {
	case r.kickc <- struct{}{}:
	default:
	}
}

func (r *readiness) setDraining() { r.draining.Store(true) }

func (r *readiness) stop() {
	r.cancel()
	<-r.done
}

// reason says why the daemon is not ready now, or "".
func (r *readiness) reason() string {
	draining, swapping, _, _ := r.served.state()
	switch {
	case r.draining.Load() || draining:
		return "the daemon is draining"
	case swapping:
		return "the desktop is being reopened after a restart"
	case !r.noToken && r.served.token() == "":
		// Every hello would be refused: not ready to serve.
		return "no token is loaded (the token file is missing or incomplete)"
	}
	return *r.last.Load()
}

// ServeHTTP answers /readyz: 200 when ready, else 503 with the reason.
func (r *readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	body, code := readinessBody{Ready: true}, http.StatusOK
	if why := r.reason(); why != "" {
		body, code = readinessBody{Reason: why}, http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

// healthz answers 200 while the process serves HTTP: it is alive.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(`{"alive":true}` + "\n"))
}
