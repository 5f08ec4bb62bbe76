package session

import (
	"context"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// Check asks the parts whether they answer now, for a readiness probe: the
// session must be Ready, the X server must accept a connection, the
// session bus and the accessibility bus (when the session has them) must
// accept one and answer, and no application may be running blind since a
// restart of the accessibility bus (an error wrapping ErrAppsLost: the tree
// cannot see it). It returns nil, or an error naming the first part that
// does not answer. The error says what in words; the session's log has the
// details (a dead part's exit status and output, the lost applications).
func (s *Session) Check(ctx context.Context) error {
	if err := s.Ready(); err != nil {
		return err
	}
	if !s.xAlive() {
		return fmt.Errorf("session: %s does not accept connections", PartX)
	}
	if s.SessionBus == "" {
		return nil
	}
	if err := busAnswers(ctx, s.SessionBus); err != nil {
		return fmt.Errorf("session: %s: %w", PartSessionBus, err)
	}
	if s.opts.NoAccessibility {
		return nil
	}
	if err := busAnswers(ctx, s.A11yBus()); err != nil {
		return fmt.Errorf("session: %s: %w", PartA11yBus, err)
	}
	if err := s.appsLost(); err != nil {
		return err
	}
	return nil
}

// busAnswers connects to the bus at addr (which answers Hello) and closes.
func busAnswers(ctx context.Context, addr string) error {
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return err
	}
	return conn.Close()
}
