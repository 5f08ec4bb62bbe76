// Package conformance runs the shinkentest conformance suite against the
// X11 backend combined with the AT-SPI client, on a private X session per
// case, with a small GTK program as the fixture application.
//
// It lives apart from package x11 so that the X11 backend's own tests do
// not depend on the accessibility client.
package conformance

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/shinkentest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// desktop is what a runtime on a Linux desktop serves: the X11 backend for
// pixels, input, windows, clipboard and apps, and AT-SPI for the tree.
type desktop struct {
	*x11.Backend
	*atspi.Client
}

func newDesktop(t *testing.T) shinken.Backend {
	sess := atspitest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := x11.Open(ctx, &x11.Options{
		Display:    sess.Display,
		Xauthority: sess.Xauthority,
		SessionBus: sess.SessionBus,
		LaunchEnv:  sess.Env(), // the accessibility bridge on, the session marker
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	c, err := atspi.Connect(ctx, &atspi.Options{
		Address:    sess.A11yBus,
		SessionBus: sess.SessionBus,
		Display:    sess.Display,
		ActivePID:  b.ActivePID,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return desktop{b, c}
}

func TestConformance(t *testing.T) {
	python := atspitest.Python(t, "gi")
	_, file, _, _ := runtime.Caller(0)
	fixture := filepath.Join(filepath.Dir(file), "..", "atspi", "testdata", "fixture.py")
	shinkentest.RunWith(t, newDesktop, &shinkentest.Options{
		Fixture: shinkentest.LaunchFixture{App: python, Args: []string{fixture}},
		Timeout: 10 * time.Second,
	})
}
