package session

import (
	"context"

	"github.com/godbus/dbus/v5"
)

// A PartError says which part of the session is not ready and why, in
// words a readiness probe may show to anyone (no process ids, paths or
// output); Err, when set, holds the details for the log.
type PartError struct {
	Part   Part
	Reason string
	Err    error
}

// Error returns "session: <part>: <reason>".
func (e *PartError) Error() string { return "session: " + string(e.Part) + ": " + e.Reason }

// Unwrap returns Err.
func (e *PartError) Unwrap() error { return e.Err }

// Check asks the parts whether they answer now, for a readiness probe: the
// session must be Ready, the X server and the buses it has must accept a
// connection and answer, and no application may be blind since the
// accessibility bus restarted (ErrAppsLost). It returns nil, a *PartError
// naming the first part that is not ready, or ErrClosed.
func (s *Session) Check(ctx context.Context) error {
	if err := s.Ready(); err != nil {
		return err
	}
	if !s.xAlive() {
		return &PartError{Part: PartX, Reason: "does not accept connections"}
	}
	if s.SessionBus == "" {
		return nil
	}
	if err := busAnswers(ctx, s.SessionBus); err != nil {
		return &PartError{Part: PartSessionBus, Reason: "does not answer", Err: err}
	}
	if s.opts.NoAccessibility {
		return nil
	}
	if err := busAnswers(ctx, s.A11yBus()); err != nil {
		return &PartError{Part: PartA11yBus, Reason: "does not answer", Err: err}
	}
	return s.appsLost()
}

// busAnswers connects to the bus at addr (which answers Hello) and closes.
func busAnswers(ctx context.Context, addr string) error {
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return err
	}
	return conn.Close()
}
