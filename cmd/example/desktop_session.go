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
)

// openSession starts the daemon's own desktop (-session): a supervised X
// session with the startup apps, and the x11 backend on it. After a
// restart of the X server or of the accessibility bus, the backend is
// opened again and swapped in (the sessions of the old one are closed with
// 1001: the windows they saw are gone); restarted reports each restart.
// stop ends the session, after the last backend's close; failed is closed
// when the session gives up on a part.
func openSession(ctx context.Context, cfg config, log *slog.Logger, swap func(func() (desktop, error)), restarted func(part string)) (d desktop, stop func(), failed <-chan struct{}, err error) {
	w, h, err := parseSize(cfg.size)
	if err != nil {
		return desktop{}, nil, nil, err
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
		restarted(string(e.Part))
		if slices.Contains(e.Restarted, session.PartX) || slices.Contains(e.Restarted, session.PartA11yBus) {
			swap(func() (desktop, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				return sessionDesktop(ctx, s)
			})
		}
	}
	s, err = session.Start(ctx, &session.Options{Width: w, Height: h, Apps: apps, Logger: log, OnEvent: onEvent})
	if err != nil {
		return desktop{}, nil, nil, fmt.Errorf("-session: %w", err)
	}
	close(started)
	d, err = sessionDesktop(ctx, s)
	if err != nil {
		s.Close()
		return desktop{}, nil, nil, err
	}
	stop = func() {
		if err := s.Close(); err != nil {
			log.Warn("desktop session did not close cleanly", "err", err)
		}
	}
	return d, stop, s.Done(), nil
}

// sessionDesktop opens the x11 backend, with the accessibility tree, on s.
func sessionDesktop(ctx context.Context, s *session.Session) (desktop, error) {
	b, err := x11.Open(ctx, &x11.Options{Display: s.Display, Xauthority: s.Xauthority, SessionBus: s.SessionBus, LaunchEnv: s.AppEnv()})
	if err != nil {
		return desktop{}, fmt.Errorf("-session: %w", err)
	}
	a := b.WithAccessibility(&atspi.Options{SessionBus: s.SessionBus, Display: s.Display, ScreenReader: true})
	return desktop{backend: a, check: s.Check, close: func() { a.Close() }}, nil
}
