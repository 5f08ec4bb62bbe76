// Package conformance runs the shinkentest conformance suite against the
// X11 backend with the AT-SPI client (x11.Backend.WithAccessibility), on a
// private X session per case, with a small GTK program as the fixture
// application.
//
// It lives apart from package x11 so that the X11 backend's own tests do
// not depend on the accessibility client.
package conformance

import (
	"context"
	"fmt"
	"image"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/shinkentest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	// What a runtime on a Linux desktop serves: the X11 backend for pixels,
	// input, windows, clipboard and apps, with AT-SPI for the tree.
	d := b.WithAccessibility(&atspi.Options{Address: sess.A11yBus, SessionBus: sess.SessionBus})
	t.Cleanup(func() { d.Close() })
	if _, err := d.Snapshot(ctx, shinken.SnapshotOptions{}); err != nil {
		t.Fatalf("the accessibility bus: %v", err)
	}
	return d
}

func TestConformance(t *testing.T) {
	python := atspitest.Python(t, "gi")
	_, file, _, _ := runtime.Caller(0)
	fixture := filepath.Join(filepath.Dir(file), "..", "atspi", "testdata", "fixture.py")
	shinkentest.RunWith(t, newDesktop, &shinkentest.Options{
		Fixture: paintedFixture{shinkentest.LaunchFixture{App: python, Args: []string{fixture}}},
		Timeout: 10 * time.Second,
		Proxy:   schematest.ProxyURL,
	})
}

// paintedFixture is LaunchFixture, returning only once the button has been
// drawn. On a real X server an application paints its window a frame after
// it maps it and fills its accessibility tree, so a capture taken as soon as
// the tree is complete can show an empty window.
type paintedFixture struct{ shinkentest.LaunchFixture }

func (f paintedFixture) Open(ctx context.Context, t *testing.T, b shinken.Backend) (*shinkentest.App, error) {
	app, err := f.LaunchFixture.Open(ctx, t, b)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		painted, err := buttonPainted(ctx, b, app.Button)
		if err != nil || painted {
			return app, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the fixture's button was never drawn: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// buttonPainted reports whether the node's bbox on screen holds more than
// one colour.
func buttonPainted(ctx context.Context, b shinken.Backend, id string) (bool, error) {
	tree, err := b.(shinken.A11y).Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
	if err != nil {
		return false, err
	}
	var box image.Rectangle
	for _, n := range tree.Nodes {
		if n.ID == id {
			box = n.BBox
		}
	}
	f, err := b.(shinken.Capturer).Capture(ctx, aci.ScopeScreen)
	if err != nil || box.Empty() {
		return false, err
	}
	box = box.Intersect(f.Source)
	first := f.Image.RGBAAt(box.Min.X, box.Min.Y)
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			if f.Image.RGBAAt(x, y) != first {
				return true, nil
			}
		}
	}
	return false, nil
}
