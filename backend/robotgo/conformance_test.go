//go:build robotgo

package robotgo

import (
	"context"
	"fmt"
	"image/color"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/shinkentest"
)

// desktop is what a Linux program serves with this backend: robotgo for
// pixels, input and the clipboard, AT-SPI for the accessibility tree that
// robotgo lacks. The suite reads the fixture back through the tree, so the
// input cases check robotgo's clicks and typing as an application sees
// them. Only A11y is taken from the client: the cases that check AT-SPI
// alone belong to its own package.
type desktop struct {
	*Backend
	*Clipboard
	shinken.A11y
}

// TestConformance runs the suite under Xvfb. The cases that need a window
// list, a launcher or change notifications skip: robotgo provides none.
func TestConformance(t *testing.T) {
	s := atspitest.Start(t)
	useDisplay(t, s.Server)
	script, err := filepath.Abs(filepath.Join("testdata", "fixture.py"))
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{s: s, python: atspitest.Python(t, "gi"), script: script}
	shinkentest.RunWith(t, func(t *testing.T) shinken.Backend {
		b := open(t)
		clip, err := b.Clipboard()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := atspi.Connect(ctx, &atspi.Options{SessionBus: s.SessionBus, Display: s.Display})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return &desktop{Backend: b, Clipboard: clip, A11y: c}
	}, &shinkentest.Options{Fixture: f, Timeout: 10 * time.Second, Proxy: schematest.ProxyURL})
}

// fixture opens testdata/fixture.py, a GTK window with a button, an entry
// and a counter label. The window manager gives a new window the focus,
// which robotgo cannot do.
type fixture struct {
	s              *atspitest.Session
	python, script string
}

func (f fixture) Open(ctx context.Context, t *testing.T, b shinken.Backend) (*shinkentest.App, error) {
	a11y := b.(shinken.A11y)
	title := fmt.Sprintf("fixture %s %d", t.Name(), time.Now().UnixNano())
	app := f.s.Launch(t, f.python, f.script, title)
	var window uint64
	var button, entry, counter string
	for {
		if window == 0 {
			if line, _, ok := strings.Cut(app.Stdout(), "\n"); ok {
				id, err := strconv.ParseUint(line, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("the fixture printed %q for its window id", line)
				}
				window = id
			}
		}
		tree, err := a11y.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
		if err != nil {
			return nil, err
		}
		if tree.Window == title {
			for _, n := range tree.Nodes {
				switch {
				case n.Role == "push button" && n.Name == "Press me":
					button = n.ID
				case n.Role == "text" && slices.Contains(n.States, "editable"):
					entry = n.ID
				case n.Role == "label" && n.Name == "0":
					counter = n.ID
				}
			}
		}
		if window != 0 && button != "" && entry != "" && counter != "" {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the fixture shows no window id, button, entry and counter: %w", ctx.Err())
		case <-app.Done():
			return nil, fmt.Errorf("the fixture exited")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return &shinkentest.App{Window: window, Button: button, Entry: entry, Activations: func(ctx context.Context) (int, error) {
		tree, err := a11y.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
		if err != nil {
			return 0, err
		}
		for _, n := range tree.Nodes {
			if n.ID == counter {
				return strconv.Atoi(n.Name)
			}
		}
		return 0, fmt.Errorf("the counter %s is gone", counter)
	}}, nil
}

// TestCaptureMatchesTree stands in for the suite's TreeMatchesPixels, which
// needs a window list: the bboxes AT-SPI gives for the fixture's button and
// entry lie on robotgo's screen capture, and something is drawn in each.
func TestCaptureMatchesTree(t *testing.T) {
	s := atspitest.Start(t)
	useDisplay(t, s.Server)
	script, err := filepath.Abs(filepath.Join("testdata", "fixture.py"))
	if err != nil {
		t.Fatal(err)
	}
	b := open(t)
	ctx := ctxT(t)
	c, err := atspi.Connect(ctx, &atspi.Options{SessionBus: s.SessionBus, Display: s.Display})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	app, err := fixture{s: s, python: atspitest.Python(t, "gi"), script: script}.Open(ctx, t, &desktop{Backend: b, A11y: c})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Capture(ctx, aci.ScopeScreen)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{app.Button, app.Entry} {
		i := slices.IndexFunc(tree.Nodes, func(n shinken.Node) bool { return n.ID == id })
		if i < 0 {
			t.Fatalf("node %s is not in the tree", id)
		}
		r := tree.Nodes[i].BBox
		if r.Empty() || !r.In(f.Source) {
			t.Fatalf("%s's bbox %v is not on the screen %v", tree.Nodes[i].Role, r, f.Source)
		}
		colours := map[color.RGBA]bool{}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				colours[f.Image.RGBAAt(x, y)] = true
			}
		}
		if len(colours) < 2 {
			t.Errorf("%s's bbox %v is one flat colour on the capture", tree.Nodes[i].Role, r)
		}
	}
}
