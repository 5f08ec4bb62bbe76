// Package x11desktop gives a daemon (package daemon) an X11 desktop: the X
// server of a display, or a supervised session of its own (Xvfb, a window
// manager, a session D-Bus, the accessibility bus, the startup apps) whose
// restarts swap a new backend into the daemon.
//
//	s, err := x11desktop.StartSession(ctx, &session.Options{Width: 1280, Height: 800})
//	if err != nil { ... }
//	defer s.Close()
//	d, err := daemon.New(ctx, &daemon.Options{Desktop: s.Desktop(), ...})
//	if err != nil { ... }
//	s.Follow(d)
//	return d.Run(ctx)
package x11desktop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/daemon"
	"shinken.dev/go/internal/agentuser"
)

// Display opens the X server opts names ($DISPLAY for nil) with the
// accessibility tree of its apps (over AT-SPI, found on first use). Its
// Check asks the accessibility bus to answer once one was found; on a
// display without one, the daemon's captured frame is all there is to
// check.
func Display(ctx context.Context, opts *x11.Options) (daemon.Desktop, error) {
	b, err := x11.Open(ctx, opts)
	if err != nil {
		return daemon.Desktop{}, fmt.Errorf("x11desktop: %w", err)
	}
	a := b.WithAccessibility(nil)
	check := func(ctx context.Context) error {
		if err := a.CheckAccessibility(ctx); err != nil {
			return daemon.NotReady("the accessibility bus", "does not answer", err)
		}
		return nil
	}
	return daemon.Desktop{Backend: a, Check: check, Close: func() { a.Close() }}, nil
}

// A Session is a supervised X session for a daemon.
type Session struct {
	s         *session.Session
	log       *slog.Logger
	desk      daemon.Desktop
	launchAs  *x11.LaunchUser // nil: launch_app starts apps as this process's user
	agentUser string          // session.Options.AgentUser

	mu     sync.Mutex
	d      *daemon.Daemon
	events chan session.Event // restarts, for the follower
	done   chan struct{}      // the follower has ended
	closed bool
}

// StartSession starts a session as opts say (opts.OnEvent, when set, is
// still called) and opens the x11 backend, with the accessibility tree, on
// it. With opts.AgentUser (the daemon's Options.AgentUser), launch_app and
// the startup apps run as that user when the session can switch to it, as
// the desktop's AppsAsAgent reports. The desktop's Check is the session's
// (every part answers); its Done closes when the session gives up a part.
func StartSession(ctx context.Context, opts *session.Options) (*Session, error) {
	var o session.Options
	if opts != nil {
		o = *opts
	}
	s := &Session{log: o.Logger, agentUser: o.AgentUser, events: make(chan session.Event, 16), done: make(chan struct{})}
	if s.log == nil {
		s.log = slog.Default()
	}
	theirs := o.OnEvent
	o.OnEvent = func(e session.Event) {
		if theirs != nil {
			theirs(e)
		}
		if e.Kind != session.EventRestarted {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		select {
		case s.events <- e:
		default:
			s.log.Warn("x11desktop: restarts come faster than the desktop reopens; one is dropped", "part", e.Part)
		}
	}
	ss, err := session.Start(ctx, &o)
	if err != nil {
		return nil, fmt.Errorf("x11desktop: %w", err)
	}
	s.s = ss
	if ss.AgentRuntimeDir != "" {
		u, err := agentuser.Lookup(o.AgentUser)
		if err != nil {
			ss.Close()
			return nil, fmt.Errorf("x11desktop: %w", err)
		}
		s.launchAs = &x11.LaunchUser{Name: u.Name, UID: u.UID, GID: u.GID, Groups: u.Groups, Home: u.Home,
			Xauthority: ss.AgentXauthority, RuntimeDir: ss.AgentRuntimeDir}
	}
	s.desk, err = s.open(ctx)
	if err != nil {
		ss.Close()
		return nil, err
	}
	go s.follow()
	return s, nil
}

// Session returns the supervised session.
func (s *Session) Session() *session.Session { return s.s }

// Desktop returns the desktop to give the daemon (Options.Desktop).
func (s *Session) Desktop() daemon.Desktop { return s.desk }

// Follow has d follow the session: each restart is counted in d's
// metrics, and a restart of the X server or the accessibility bus swaps a
// backend opened again into d (see daemon.Daemon.Swap).
func (s *Session) Follow(d *daemon.Daemon) {
	s.mu.Lock()
	s.d = d
	s.mu.Unlock()
}

// follow handles the restarts, one at a time, until Close.
func (s *Session) follow() {
	defer close(s.done)
	for e := range s.events {
		s.mu.Lock()
		d := s.d
		s.mu.Unlock()
		if d == nil {
			continue // not serving yet: nothing to swap
		}
		if m := d.Metrics(); m != nil {
			m.Restart(string(e.Part))
		}
		if slices.Contains(e.Restarted, session.PartX) || slices.Contains(e.Restarted, session.PartA11yBus) {
			d.Swap(func() (daemon.Desktop, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				return s.open(ctx)
			})
		}
	}
}

// partNames say the session's parts in /readyz's words.
var partNames = map[session.Part]string{
	session.PartX:             "the X server",
	session.PartWindowManager: "the window manager",
	session.PartSessionBus:    "the session bus",
	session.PartA11yBus:       "the accessibility bus",
}

// open opens the x11 backend, with the accessibility tree, on the session.
func (s *Session) open(ctx context.Context) (daemon.Desktop, error) {
	ss := s.s
	b, err := x11.Open(ctx, &x11.Options{Display: ss.Display, Xauthority: ss.Xauthority, SessionBus: ss.SessionBus, LaunchEnv: ss.AppEnv(), LaunchUser: s.launchAs})
	if err != nil {
		return daemon.Desktop{}, fmt.Errorf("x11desktop: %w", err)
	}
	a := b.WithAccessibility(&atspi.Options{SessionBus: ss.SessionBus, Display: ss.Display, ScreenReader: true})
	check := func(ctx context.Context) error {
		err := ss.Check(ctx)
		var pe *session.PartError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &pe):
			// In words, with no pid or path: "the accessibility bus 1
			// application(s) on the desktop lost it when it restarted...".
			name := partNames[pe.Part]
			if name == "" {
				name = "the desktop session's " + string(pe.Part)
			}
			return daemon.NotReady(name, pe.Reason, err)
		}
		return daemon.NotReady("the desktop session", "is not ready", err)
	}
	var asAgent func() error
	if s.agentUser != "" {
		asAgent = func() error {
			if s.launchAs != nil {
				return nil
			}
			if ss.AgentRefused != nil {
				return ss.AgentRefused
			}
			return errors.New("the session does not run its applications as the agent's user")
		}
	}
	return daemon.Desktop{Backend: a, Check: check, AppsAsAgent: asAgent, Close: func() { a.Close() }, Done: ss.Done()}, nil
}

// Close ends the session; call it once the daemon's Run has returned.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.s.Close()
	s.mu.Lock()
	close(s.events) // OnEvent sends no more: closed is set
	s.mu.Unlock()
	<-s.done
	return err
}
