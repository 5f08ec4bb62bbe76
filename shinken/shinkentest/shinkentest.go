package shinkentest

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken"
)

// FixtureApp is the application name [LaunchFixture] launches by default.
const FixtureApp = "shinkentest"

// defaultTimeout is how long a case waits for a backend to reflect an
// action when [Options.Timeout] is zero.
const defaultTimeout = 5 * time.Second

// Options configure [RunWith]. A nil *Options means the defaults.
type Options struct {
	// Fixture opens the application that the element cases drive.
	// nil means LaunchFixture{} (the application named FixtureApp).
	Fixture Fixture
	// Timeout bounds each wait for the backend to reflect an action (a
	// case as a whole gets 12 times as long, at least 2 min). 0 means 5 s.
	Timeout time.Duration
	// Proxy, when set, is given the URL of each Runtime the suite serves
	// (Wire and Settled) and returns the URL its client dials instead: this
	// module's backends pass a proxy checking each message against the ACI
	// schema, as the suite links no schema validator. nil dials directly.
	Proxy func(t testing.TB, url string) string
}

// A Fixture puts the suite's application on a backend's screen.
type Fixture interface {
	// Open shows the application on b and returns its parts once its window
	// is listed and active and its button and entry are in the tree. It may
	// register cleanups on t; an error wrapping errors.ErrUnsupported skips.
	Open(ctx context.Context, t *testing.T, b shinken.Backend) (*App, error)
}

// An App is an open fixture application.
type App struct {
	// Window is the id of its top-level window, as Windows lists it.
	Window uint64
	// Button is the node ID of a push button.
	Button string
	// Entry is the node ID of a single-line editable text.
	Entry string
	// Activations counts the button's activations (click, key, action) since Open.
	Activations func(ctx context.Context) (int, error)
}

// LaunchFixture is the [Fixture] that [Run] uses, as the package
// documentation describes.
type LaunchFixture struct {
	App  string   // the application passed to Launch; "" means FixtureApp
	Args []string // its arguments, passed verbatim
}

// Run runs the conformance suite with the default [Options].
func Run(t *testing.T, newBackend func(t *testing.T) shinken.Backend) {
	t.Helper()
	RunWith(t, newBackend, nil)
}

// RunWith runs every case of the suite as a subtest of t, each against a
// fresh backend from newBackend.
func RunWith(t *testing.T, newBackend func(t *testing.T) shinken.Backend, opts *Options) {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Fixture == nil {
		o.Fixture = LaunchFixture{}
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	t.Run("CheckBackend", func(t *testing.T) {
		if err := shinken.CheckBackend(newBackend(t)); err != nil {
			t.Fatal(err)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), caseDeadline(o))
			defer cancel()
			s := &suite{t: t, ctx: ctx, b: newBackend(t), opts: o}
			c.run(s)
		})
	}
	// The same contracts, seen by an agent: through a Runtime and a Client.
	t.Run("Wire", func(t *testing.T) {
		for _, c := range cases {
			if directOnly[c.name] {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), caseDeadline(o))
				defer cancel()
				w := newWire(t, newBackend(t), o.Proxy)
				s := &suite{t: t, ctx: ctx, b: w, real: w.real, opts: o}
				c.run(s)
			})
		}
	})
}

// Open implements [Fixture].
func (f LaunchFixture) Open(ctx context.Context, t *testing.T, b shinken.Backend) (*App, error) {
	launcher, ok := b.(shinken.Launcher)
	if !ok {
		return nil, fmt.Errorf("shinkentest: the backend is no shinken.Launcher: %w", errors.ErrUnsupported)
	}
	windows, ok := b.(shinken.Windows)
	if !ok {
		return nil, fmt.Errorf("shinkentest: the backend is no shinken.Windows: %w", errors.ErrUnsupported)
	}
	a11y, ok := b.(shinken.A11y)
	if !ok {
		return nil, fmt.Errorf("shinkentest: the backend is no shinken.A11y: %w", errors.ErrUnsupported)
	}
	name := f.App
	if name == "" {
		name = FixtureApp
	}
	before, err := windows.Windows(ctx)
	if err != nil {
		return nil, err
	}
	if err := launcher.Launch(ctx, name, f.Args); err != nil {
		return nil, err
	}
	app := &App{}
	err = poll(ctx, func() (bool, error) {
		now, err := windows.Windows(ctx)
		if err != nil {
			return false, err
		}
		for _, w := range now {
			if !slices.ContainsFunc(before, func(o shinken.Window) bool { return o.ID == w.ID }) {
				app.Window = w.ID
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("shinkentest: no new window after launching %s: %w", name, err)
	}
	if err := windows.Activate(ctx, app.Window); err != nil {
		return nil, err
	}
	var counter string
	err = poll(ctx, func() (bool, error) {
		list, err := windows.Windows(ctx)
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(list, func(w shinken.Window) bool { return w.ID == app.Window })
		if i < 0 {
			return false, fmt.Errorf("shinkentest: window %d of %s vanished", app.Window, name)
		}
		tree, err := a11y.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
		if err != nil {
			return false, err
		}
		app.Button, app.Entry, counter = findParts(windowNodes(tree, list[i].BBox))
		return app.Button != "" && app.Entry != "" && counter != "", nil
	})
	if err != nil {
		return nil, fmt.Errorf("shinkentest: %s shows no push button, editable text and label %q (found %q, %q, %q): %w",
			name, "0", app.Button, app.Entry, counter, err)
	}
	app.Activations = func(ctx context.Context) (int, error) {
		n, err := findNode(ctx, a11y, counter)
		if err != nil {
			return 0, err
		}
		var count int
		if _, err := fmt.Sscan(nodeText(n), &count); err != nil {
			return 0, fmt.Errorf("shinkentest: counter label reads %q: %w", nodeText(n), err)
		}
		return count, nil
	}
	return app, nil
}

// windowNodes returns the subtree of the top-level node that covers most of
// bbox, so that an application with several windows is searched in the
// right one; all the nodes when no top-level node overlaps bbox.
func windowNodes(tree *shinken.Tree, bbox image.Rectangle) []shinken.Node {
	best, bestArea := -1, 0
	for i, n := range tree.Nodes {
		if n.Parent >= 0 && tree.Nodes[n.Parent].Parent >= 0 {
			continue // only roots and their children can be windows
		}
		if r := n.BBox.Intersect(bbox); !r.Empty() && r.Dx()*r.Dy() > bestArea && (n.Role == "frame" || n.Role == "window" || n.Role == "dialog") {
			best, bestArea = i, r.Dx()*r.Dy()
		}
	}
	if best < 0 {
		return tree.Nodes
	}
	end := best + 1
	for end < len(tree.Nodes) && tree.Nodes[end].Depth > tree.Nodes[best].Depth {
		end++
	}
	return tree.Nodes[best:end]
}

// findParts finds the fixture's button, entry and counter label in nodes.
func findParts(nodes []shinken.Node) (button, entry, counter string) {
	singleLine := false
	for _, n := range nodes {
		switch {
		case n.Role == "push button" && button == "":
			button = n.ID
		case (n.Role == "text" || n.Role == "entry") && slices.Contains(n.States, "editable"):
			sl := slices.Contains(n.States, "single line")
			if entry == "" || sl && !singleLine {
				entry, singleLine = n.ID, sl
			}
		case n.Role == "label" && counter == "" && strings.TrimSpace(nodeText(&n)) == "0":
			counter = n.ID
		}
	}
	return button, entry, counter
}

// nodeText is a node's text: its value when it has one, else its name.
func nodeText(n *shinken.Node) string {
	if n.Value != "" {
		return n.Value
	}
	return n.Name
}

// findNode returns the node whose ID is id, looking in the active
// application first and then in the whole desktop.
func findNode(ctx context.Context, a11y shinken.A11y, id string) (*shinken.Node, error) {
	for _, scope := range []shinken.TreeScope{shinken.TreeActiveApp, shinken.TreeDesktop} {
		tree, err := a11y.Snapshot(ctx, shinken.SnapshotOptions{Scope: scope})
		if err != nil {
			return nil, err
		}
		for i := range tree.Nodes {
			if tree.Nodes[i].ID == id {
				return &tree.Nodes[i], nil
			}
		}
	}
	return nil, fmt.Errorf("shinkentest: node %s is not in the tree", id)
}

// errNotYet is what poll returns when its condition never held.
var errNotYet = errors.New("shinkentest: condition not met before the deadline")

// caseDeadline bounds a whole case, only so that a backend that hangs
// fails its case rather than the test binary: what a case waits for is
// bounded by Options.Timeout wait by wait, and a case is many calls (the
// Settled case through a Runtime and a Client, each message checked
// against the schema) that a loaded machine makes slow, not wrong.
func caseDeadline(o Options) time.Duration { return max(12*o.Timeout, 2*time.Minute) }

// poll calls cond until it reports true, returns an error, or ctx is done.
// The pause between calls grows from 1 ms to 50 ms: backends that apply
// input synchronously pass on the first call.
func poll(ctx context.Context, cond func() (bool, error)) error {
	pause := time.Millisecond
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w: %w", errNotYet, ctx.Err())
		case <-timer.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// center is the middle of r.
func center(r image.Rectangle) image.Point {
	return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
}
