package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/shinken/daemon"
)

// openSession starts the daemon's own desktop (-session): a supervised X
// session with the startup apps, and the x11 backend on it. After a
// restart of the X server or of the accessibility bus, the backend is
// opened again and swapped into the daemon d returns (the sessions of the
// old one are closed: the windows they saw are gone); each restart is
// counted in its metrics. stop ends the session, after the last backend's
// close; the desktop's Done is closed when the session gives up on a part.
func openSession(ctx context.Context, cfg config, log *slog.Logger, d func() *daemon.Daemon) (desk daemon.Desktop, stop func(), err error) {
	w, h, err := parseSize(cfg.size)
	if err != nil {
		return desk, nil, err
	}
	var apps [][]string
	for _, a := range cfg.apps {
		if argv := strings.Fields(a); len(argv) > 0 {
			apps = append(apps, argv)
		}
	}
	var s *session.Session
	started := make(chan struct{}) // s is set
	onEvent := func(e session.Event) {
		if e.Kind != session.EventRestarted {
			return
		}
		<-started
		dm := d()
		if dm == nil {
			return // not serving yet: nothing to swap
		}
		if m := dm.Metrics(); m != nil {
			m.Restart(string(e.Part))
		}
		if slices.Contains(e.Restarted, session.PartX) || slices.Contains(e.Restarted, session.PartA11yBus) {
			dm.Swap(func() (daemon.Desktop, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				return sessionDesktop(ctx, s)
			})
		}
	}
	s, err = session.Start(ctx, &session.Options{Width: w, Height: h, Apps: apps, Logger: log, OnEvent: onEvent})
	if err != nil {
		return desk, nil, fmt.Errorf("-session: %w", err)
	}
	close(started)
	desk, err = sessionDesktop(ctx, s)
	if err != nil {
		s.Close()
		return desk, nil, err
	}
	stop = func() {
		if err := s.Close(); err != nil {
			log.Warn("desktop session did not close cleanly", "err", err)
		}
	}
	return desk, stop, nil
}

// sessionDesktop opens the x11 backend, with the accessibility tree, on s.
func sessionDesktop(ctx context.Context, s *session.Session) (daemon.Desktop, error) {
	b, err := x11.Open(ctx, &x11.Options{Display: s.Display, Xauthority: s.Xauthority, SessionBus: s.SessionBus, LaunchEnv: s.AppEnv()})
	if err != nil {
		return daemon.Desktop{}, fmt.Errorf("-session: %w", err)
	}
	a := b.WithAccessibility(&atspi.Options{SessionBus: s.SessionBus, Display: s.Display, ScreenReader: true})
	check := func(ctx context.Context) error {
		if err := s.Check(ctx); err != nil {
			return daemon.NotReady("the desktop session", "has a part that does not answer", err)
		}
		return nil
	}
	return daemon.Desktop{Backend: a, Check: check, Close: func() { a.Close() }, Done: s.Done()}, nil
}
