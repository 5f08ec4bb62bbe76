package atspi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/shinkentest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor is how long a test waits for an application to show something.
const waitFor = 20 * time.Second

// connect connects a Client to the session's accessibility bus.
func connect(t testing.TB, s *atspitest.Session, opts *Options) *Client {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.SessionBus = s.SessionBus
	o.Display = s.Display
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := Connect(ctx, &o)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitTree snapshots until ok accepts the tree, and returns it.
func waitTree(t testing.TB, c *Client, opts shinken.SnapshotOptions, what string, ok func(*shinken.Tree) bool) *shinken.Tree {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var last *shinken.Tree
	var lastErr error
	for {
		tree, err := c.Snapshot(ctx, opts)
		if err == nil && ok(tree) {
			return tree
		}
		if err == nil {
			last = tree
		} else if ctx.Err() == nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no snapshot shows %s after %v (last error %v); last tree:\n%s", what, waitFor, lastErr, dump(last))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// dump renders a tree for failure messages.
func dump(tree *shinken.Tree) string {
	if tree == nil {
		return "(none)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "app %q window %q others %q truncated %v %q\n", tree.App, tree.Window, tree.Others, tree.Truncated, tree.TruncatedWhy)
	for i, n := range tree.Nodes {
		if i > 400 {
			fmt.Fprintf(&b, "... %d more\n", len(tree.Nodes)-i)
			break
		}
		fmt.Fprintf(&b, "%s%s %q value=%q %v states=%v actions=%v\n", strings.Repeat("  ", n.Depth), n.Role, n.Name, n.Value, n.BBox, n.States, n.Actions)
	}
	return b.String()
}

// find returns the first node with role and name ("" matches any name).
func find(tree *shinken.Tree, role, name string) *shinken.Node {
	if tree == nil {
		return nil
	}
	for i := range tree.Nodes {
		n := &tree.Nodes[i]
		if n.Role == role && (name == "" || n.Name == name) {
			return n
		}
	}
	return nil
}

// editable returns the first editable text node.
func editable(tree *shinken.Tree) *shinken.Node {
	for i := range tree.Nodes {
		n := &tree.Nodes[i]
		if (n.Role == "text" || n.Role == "entry") && slices.Contains(n.States, "editable") {
			return n
		}
	}
	return nil
}

// checkShape checks the invariants every tree keeps: pre-order, parents
// before children, depths one more than the parent's, unique IDs.
func checkShape(t testing.TB, tree *shinken.Tree) {
	t.Helper()
	ids := map[string]bool{}
	for i, n := range tree.Nodes {
		switch {
		case n.ID == "" || ids[n.ID]:
			t.Fatalf("node %d has an empty or repeated ID %q", i, n.ID)
		case n.Parent >= i || n.Parent < -1:
			t.Fatalf("node %d (%s) has parent %d", i, n.ID, n.Parent)
		case n.Parent == -1 && n.Depth != 0:
			t.Fatalf("root %d has depth %d", i, n.Depth)
		case n.Parent >= 0 && n.Depth != tree.Nodes[n.Parent].Depth+1:
			t.Fatalf("node %d depth %d under parent depth %d", i, n.Depth, tree.Nodes[n.Parent].Depth)
		case n.Role == "":
			t.Fatalf("node %d has no role", i)
		}
		ids[n.ID] = true
		bus, path, ok := parseID(n.ID)
		if !ok || n.Provenance["bus"] != bus || n.Provenance["path"] != path {
			t.Fatalf("node %d: ID %q, provenance %v", i, n.ID, n.Provenance)
		}
	}
}

// zenityEntry waits for zenity --entry to show its entry and buttons.
func zenityEntry(t testing.TB, c *Client) (tree *shinken.Tree, entry, ok, cancel, frame *shinken.Node) {
	t.Helper()
	tree = waitTree(t, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "zenity's entry and buttons", func(tr *shinken.Tree) bool {
		return tr.App == "zenity" && editable(tr) != nil && find(tr, "push button", "OK") != nil &&
			find(tr, "push button", "Cancel") != nil && find(tr, "push button", "OK").BBox != image.Rectangle{}
	})
	return tree, editable(tree), find(tree, "push button", "OK"), find(tree, "push button", "Cancel"), &tree.Nodes[1]
}

// TestZenityEntry observes zenity --entry, checks the entry and the buttons
// against the window and the screen's pixels, sets the entry and invokes
// OK: zenity prints the value.
func TestZenityEntry(t *testing.T) {
	s := atspitest.Start(t)
	z := s.Launch(t, "zenity", "--entry", "--title=Shinken entry", "--text=Your name?")
	c := connect(t, s, nil)
	tree, entry, ok, cancelButton, frame := zenityEntry(t, c)
	checkShape(t, tree)
	if frame.Role != "dialog" && frame.Role != "frame" || frame.Name != "Shinken entry" {
		t.Fatalf("top window is %s %q, want the dialog\n%s", frame.Role, frame.Name, dump(tree))
	}
	if tree.Window != "Shinken entry" {
		t.Errorf("Tree.Window = %q", tree.Window)
	}
	for _, n := range []*shinken.Node{entry, ok, cancelButton} {
		if n.BBox.Empty() || !n.BBox.In(frame.BBox) {
			t.Errorf("%s %q: bbox %v not inside the window %v", n.Role, n.Name, n.BBox, frame.BBox)
		}
	}
	if !slices.Contains(ok.Actions, "click") {
		t.Errorf("OK's actions %v lack click", ok.Actions)
	}
	if !slices.Contains(entry.States, "single line") {
		t.Errorf("entry states %v", entry.States)
	}
	checkPixels(t, s, frame.BBox, ok.BBox, cancelButton.BBox)

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	const name = "Ada Lovelace ✓"
	if err := c.Perform(ctx, entry.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: name}); err != nil {
		t.Fatalf("set_value: %v", err)
	}
	after := waitTree(t, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "the entry's new value", func(tr *shinken.Tree) bool {
		e := editable(tr)
		return e != nil && e.Value == name
	})
	if e := editable(after); e.ID != entry.ID {
		t.Errorf("the entry's ID changed from %s to %s", entry.ID, e.ID)
	}
	err := c.Perform(ctx, ok.ID, shinken.ElementAction{Op: shinken.OpInvoke, Action: "no-such-action"})
	if !errors.Is(err, aci.ErrNoSuchAction) {
		t.Fatalf("an unknown action: err = %v, want ErrNoSuchAction", err)
	}
	if err := c.Perform(ctx, ok.ID, shinken.ElementAction{Op: shinken.OpInvoke, Action: "click"}); err != nil {
		t.Fatalf("invoking OK: %v", err)
	}
	select {
	case <-z.Done():
	case <-ctx.Done():
		t.Fatal("zenity did not exit after OK")
	}
	if got := z.Stdout(); got != name+"\n" {
		t.Fatalf("zenity printed %q, want %q", got, name+"\n")
	}
	err = c.Perform(ctx, ok.ID, shinken.ElementAction{Op: shinken.OpInvoke})
	if !errors.Is(err, aci.ErrStaleElementRef) {
		t.Fatalf("invoking a node of an app that quit: err = %v, want ErrStaleElementRef", err)
	}
}

// checkPixels takes a screenshot and checks that the buttons are drawn
// where their bboxes say: each holds pixels unlike the window's background.
func checkPixels(t *testing.T, s *atspitest.Session, window image.Rectangle, buttons ...image.Rectangle) {
	t.Helper()
	if _, err := exec.LookPath("import"); err != nil {
		t.Log("no ImageMagick import: bboxes not checked against pixels")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	out, err := s.Command(ctx, "import", "-window", "root", "png:-").Output()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	bg := dominant(img, window)
	for _, b := range buttons {
		differ, total := 0, 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				total++
				if distance(img.At(x, y), bg) > 48 {
					differ++
				}
			}
		}
		if total == 0 || differ*100 < total {
			t.Errorf("button bbox %v: %d of %d pixels differ from the window background: nothing drawn there", b, differ, total)
		}
	}
}

// dominant returns the most common colour in r: a window's background.
func dominant(img image.Image, r image.Rectangle) [3]uint32 {
	counts := map[[3]uint32]int{}
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			counts[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	var best [3]uint32
	for c, n := range counts {
		if n > counts[best] {
			best = c
		}
	}
	return best
}

// distance is the sum of the channel differences between c and ref.
func distance(c interface{ RGBA() (r, g, b, a uint32) }, ref [3]uint32) int {
	r, g, b, _ := c.RGBA()
	d := 0
	for i, v := range [3]uint32{r >> 8, g >> 8, b >> 8} {
		d += max(int(v)-int(ref[i]), int(ref[i])-int(v))
	}
	return d
}

// fixture opens testdata/fixture.py for the conformance suite.
type fixture struct {
	s              *atspitest.Session
	python, script string
}

func (f fixture) Open(ctx context.Context, t *testing.T, b shinken.Backend) (*shinkentest.App, error) {
	c := b.(shinken.A11y) // the Client, or the suite's view of it through a Runtime
	title := "fixture " + t.Name()
	f.s.Launch(t, f.python, f.script, title)
	var button, entry, counter string
	for {
		tree, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
		if err != nil {
			return nil, err
		}
		if tree.Window == title {
			if n := find(tree, "push button", "Press me"); n != nil {
				button = n.ID
			}
			if n := editable(tree); n != nil {
				entry = n.ID
			}
			if n := find(tree, "label", "0"); n != nil {
				counter = n.ID
			}
			if button != "" && entry != "" && counter != "" {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the fixture shows no button, entry and counter: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return &shinkentest.App{Button: button, Entry: entry, Activations: func(ctx context.Context) (int, error) {
		tree, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
		if err != nil {
			return 0, err
		}
		for _, n := range tree.Nodes {
			if n.ID == counter {
				var count int
				_, err := fmt.Sscan(n.Name, &count)
				return count, err
			}
		}
		return 0, fmt.Errorf("the counter %s is gone", counter)
	}}, nil
}

// TestConformance runs the conformance suite's accessibility cases against
// a Client; the cases that need a display or input skip, the X11 backend
// runs them.
func TestConformance(t *testing.T) {
	s := atspitest.Start(t)
	script, err := filepath.Abs(filepath.Join("testdata", "fixture.py"))
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{s: s, python: atspitest.Python(t, "gi"), script: script}
	shinkentest.RunWith(t, func(t *testing.T) shinken.Backend { return connect(t, s, nil) },
		&shinkentest.Options{Fixture: f, Timeout: 10 * time.Second, Proxy: schematest.ProxyURL})
}

// TestBusRouted drives an application that offers no peer-to-peer socket
// (its runtime directory cannot be created), so every call goes through the
// bus daemon.
func TestBusRouted(t *testing.T) {
	s := atspitest.Start(t)
	z := s.LaunchEnv(t, []string{"XDG_RUNTIME_DIR=/dev/null/none"}, "zenity", "--entry", "--title=Routed", "--text=Routed")
	c := connect(t, s, nil)
	tree, entry, ok, _, _ := zenityEntry(t, c)
	checkShape(t, tree)
	a := c.appFor(entry.Provenance["bus"].(string))
	a.mu.Lock()
	addr, dest := a.addr, a.dest
	a.mu.Unlock()
	if addr != "" || dest == "" {
		t.Fatalf("the application offers %q, calls go to %q: want no peer-to-peer address", addr, dest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := c.Perform(ctx, entry.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "via the bus"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Perform(ctx, ok.ID, shinken.ElementAction{Op: shinken.OpInvoke}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-z.Done():
	case <-ctx.Done():
		t.Fatal("zenity did not exit after OK")
	}
	if got := z.Stdout(); got != "via the bus\n" {
		t.Fatalf("zenity printed %q", got)
	}
}

// TestConcurrentSnapshots runs snapshots and element verbs from several
// goroutines at once, for the race detector.
func TestConcurrentSnapshots(t *testing.T) {
	s := atspitest.Start(t)
	c := connect(t, s, nil)
	// The rows first, so that zenity's window, mapped last, is the active
	// one zenityEntry waits for.
	launchRows(t, s, "50", "listbox")
	waitTree(t, c, desktop(), "the rows", func(tr *shinken.Tree) bool { return find(tr, "label", "Row 49") != nil })
	s.Launch(t, "zenity", "--entry", "--title=Busy", "--text=Busy")
	_, entry, _, _, _ := zenityEntry(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			var err error
			for j := 0; j < 5 && err == nil; j++ {
				switch i % 3 {
				case 0:
					_, err = c.Snapshot(ctx, desktop())
				case 1:
					_, err = c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp, MaxNodes: 20})
				default:
					err = c.Perform(ctx, entry.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: fmt.Sprint(i, j)})
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
