package x11

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestCheckAccessibility checks the readiness contract of the
// accessibility tree: nothing to check on a display without a bus; a bus
// that answers is fine; a bus that went away is an a11y_unavailable error
// until a bus answers again, and then observations work again.
func TestCheckAccessibility(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		s := newSession(t, &xvfb.Options{NoWM: true}, nil)
		a := s.b.WithAccessibility(&atspi.Options{Display: s.srv.Display, SessionBus: "unix:path=/nonexistent"})
		t.Cleanup(func() { a.Close() })
		if err := a.CheckAccessibility(ctxT(t)); err != nil {
			t.Fatalf("without a bus: %v", err)
		}
	})
	t.Run("lost", func(t *testing.T) {
		s := newSession(t, &xvfb.Options{NoWM: true, Accessibility: true, Restart: true}, nil)
		a := s.b.WithAccessibility(&atspi.Options{Display: s.srv.Display, SessionBus: s.srv.SessionBus})
		t.Cleanup(func() { a.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := a.CheckAccessibility(ctx); err != nil {
			t.Fatalf("with a bus: %v", err)
		}
		syscall.Kill(a11yBusPID(t, s.srv), syscall.SIGKILL)
		err := a.CheckAccessibility(ctx)
		if !errors.Is(err, aci.ErrA11yUnavailable) {
			t.Fatalf("after the bus died: %v", err)
		}
		// The session restarts the bus; the Accessible finds it again
		// (after its retry delay).
		deadline := time.Now().Add(time.Minute)
		for a.CheckAccessibility(ctx) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the restarted bus was not found again: %v", a.CheckAccessibility(ctx))
			}
			time.Sleep(50 * time.Millisecond) // polling a readiness check
		}
		if _, err := a.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop}); err != nil {
			t.Fatalf("snapshot on the bus found again: %v", err)
		}
	})
}

// a11yBusPID finds the session's accessibility bus: the dbus-daemon with
// at-spi2's configuration.
func a11yBusPID(t *testing.T, s *xvfb.Server) int {
	t.Helper()
	pids, err := s.Processes()
	if err != nil {
		t.Fatal(err)
	}
	if pid := procfs.Find(pids, "dbus-daemon", "/accessibility.conf"); pid != 0 {
		return pid
	}
	t.Fatalf("no accessibility bus among %v", pids)
	return 0
}
