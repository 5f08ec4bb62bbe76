package atspi

import (
	"context"
	"fmt"
	"image"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken"
)

// sameGeometry compares the bboxes of the nodes two trees share and
// describes the first difference, or returns "".
func sameGeometry(got, want *shinken.Tree) string {
	byID := map[string]image.Rectangle{}
	for _, n := range want.Nodes {
		byID[n.ID] = n.BBox
	}
	shared := 0
	for _, n := range got.Nodes {
		w, ok := byID[n.ID]
		if !ok {
			continue
		}
		shared++
		if w != n.BBox {
			return fmt.Sprintf("%s %q: bbox %v, a fresh read says %v", n.Role, n.Name, n.BBox, w)
		}
	}
	if shared < len(want.Nodes)/2 {
		return fmt.Sprintf("only %d of %d nodes shared", shared, len(want.Nodes))
	}
	return ""
}

// moveWindow moves or resizes a top-level window with Component, as a
// window manager would: the content moves without AT-SPI events of its own.
func moveWindow(t *testing.T, c *Client, id string, member string, a, b int32) {
	t.Helper()
	bus, path, _ := parseID(id)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	mc := &methodCall{path: path, iface: ifComponent, member: member, sig: "iiu",
		args: func(e *encoder) { e.i32(a); e.i32(b); e.u32(coordTypeScreen) }}
	if member == "SetSize" {
		mc.sig, mc.args = "ii", func(e *encoder) { e.i32(a); e.i32(b) }
	}
	app := c.appFor(bus)
	err := c.withApp(ctx, app, func(conn *wireConn, dest string) error {
		p := c.pipeline(ctx, app, conn, time.Now().Add(waitFor))
		var callErr error
		mc.dest = dest
		p.call(mc, func(m *message, err error) { callErr = err })
		if err := p.run(); err != nil {
			return err
		}
		return callErr
	})
	if err != nil {
		t.Fatalf("moving the window: %v", err)
	}
}

// TestGeometryFollowsChanges checks that reused extents never go stale: a
// Client that reuses them and one that reads everything afresh agree after
// the window moves and after its list scrolls.
func TestGeometryFollowsChanges(t *testing.T) {
	s := atspitest.Start(t)
	launchRows(t, s, "200", "listbox")
	c := connect(t, s, nil)
	fresh := connect(t, s, &Options{NoCache: true})
	active := shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	before := waitTree(t, c, active, "the rows", func(tr *shinken.Tree) bool {
		return len(tr.Nodes) > 400 && tr.Nodes[1].BBox.Dx() > 0
	})
	// Warm the memo, and check that a warm snapshot asks little.
	if _, err := c.Snapshot(ctx, active); err != nil {
		t.Fatal(err)
	}
	calls := c.calls.Load()
	if _, err := c.Snapshot(ctx, active); err != nil {
		t.Fatal(err)
	}
	if n := c.calls.Load() - calls; n > uint64(3*len(before.Nodes)) {
		t.Errorf("a warm snapshot of %d nodes made %d calls", len(before.Nodes), n)
	}
	agree := func(what string, changed func(*shinken.Tree) bool) {
		t.Helper()
		deadline := time.Now().Add(waitFor)
		for {
			want, err := fresh.Snapshot(ctx, active)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Snapshot(ctx, active)
			if err != nil {
				t.Fatal(err)
			}
			diff := sameGeometry(got, want)
			if diff == "" && changed(want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %s: %s (changed: %v)", what, diff, changed(want))
			}
			time.Sleep(20 * time.Millisecond) // polling the application's state; nothing to wait on
		}
	}

	frame := before.Nodes[1]
	moveWindow(t, c, frame.ID, "SetPosition", int32(frame.BBox.Min.X+150), int32(frame.BBox.Min.Y+100))
	agree("a window move", func(tr *shinken.Tree) bool { return tr.Nodes[1].BBox.Min != frame.BBox.Min })
	moveWindow(t, c, frame.ID, "SetSize", int32(frame.BBox.Dx()+120), int32(frame.BBox.Dy()-150))
	agree("a window resize", func(tr *shinken.Tree) bool { return tr.Nodes[1].BBox.Size() != frame.BBox.Size() })

	// Scroll the list by setting its scroll bar.
	tree, err := c.Snapshot(ctx, active)
	if err != nil {
		t.Fatal(err)
	}
	var bar *shinken.Node
	for i, n := range tree.Nodes {
		if n.Role == "scroll bar" && strings.Contains(strings.Join(n.States, ","), "vertical") {
			bar = &tree.Nodes[i]
		}
	}
	row := find(tree, "label", "Row 3")
	if bar == nil || row == nil || row.BBox.Empty() {
		t.Fatalf("no vertical scroll bar or visible row 3:\n%s", dump(tree))
	}
	if err := c.Perform(ctx, bar.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "600"}); err != nil {
		t.Fatalf("scrolling: %v", err)
	}
	agree("scrolling", func(tr *shinken.Tree) bool {
		n := find(tr, "label", "Row 3")
		return n != nil && n.BBox != row.BBox
	})
}

// TestSentinels checks the re-reads that catch what no event reports:
// remembered extents are shifted behind the Client's back, first for the
// whole window, then only for the content of the list's viewport, and a
// snapshot must still agree with a fresh read.
func TestSentinels(t *testing.T) {
	s := atspitest.Start(t)
	launchRows(t, s, "100", "listbox")
	c := connect(t, s, nil)
	fresh := connect(t, s, &Options{NoCache: true})
	active := shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	tree := waitTree(t, c, active, "the rows", func(tr *shinken.Tree) bool {
		return len(tr.Nodes) > 200 && tr.Nodes[1].BBox.Dx() > 0
	})
	var viewport string
	for _, n := range tree.Nodes {
		if n.Role == "viewport" {
			viewport = n.Provenance["path"].(string)
		}
	}
	if viewport == "" {
		t.Fatalf("no viewport:\n%s", dump(tree))
	}
	bus := tree.Nodes[0].Provenance["bus"].(string)
	shift := func(under func(path string, k *known, nodes map[string]*known) bool) {
		t.Helper()
		a := c.appFor(bus)
		err := c.withApp(ctx, a, func(*wireConn, string) error {
			for path, k := range a.memo.nodes {
				if k.haveBBox && under(path, k, a.memo.nodes) {
					k.bbox = k.bbox.Add(image.Pt(7, 3))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	inside := func(path string, k *known, nodes map[string]*known) bool {
		for p := k.parent; p != ""; p = nodes[p].parent {
			if p == viewport {
				return true
			}
			if nodes[p] == nil {
				return false
			}
		}
		return false
	}
	for _, tc := range []struct {
		what  string
		under func(string, *known, map[string]*known) bool
	}{
		{"the whole window", func(string, *known, map[string]*known) bool { return true }},
		{"the viewport's content", inside},
	} {
		if _, err := c.Snapshot(ctx, active); err != nil {
			t.Fatal(err)
		}
		shift(tc.under)
		got, err := c.Snapshot(ctx, active)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Snapshot(ctx, active)
		if err != nil {
			t.Fatal(err)
		}
		if diff := sameGeometry(got, want); diff != "" {
			t.Fatalf("after shifting %s: %s", tc.what, diff)
		}
	}
}

// TestBusyRereadsSubtree: a node whose busy state changes (a document that
// loaded) has its subtree read again; other state changes read the node
// alone.
func TestBusyRereadsSubtree(t *testing.T) {
	m := &memo{walked: true}
	m.record("StateChanged", "/doc", "busy")
	m.record("StateChanged", "/box", "checked")
	ev := m.take()
	if !ev.kidsDirty["/doc"] || !ev.baseDirty["/doc"] {
		t.Errorf("busy on /doc: kids dirty %v, base dirty %v", ev.kidsDirty, ev.baseDirty)
	}
	if ev.kidsDirty["/box"] || !ev.baseDirty["/box"] || ev.geomDirty["/box"] {
		t.Errorf("checked on /box: kids %v, base %v, geometry %v", ev.kidsDirty, ev.baseDirty, ev.geomDirty)
	}
}

// TestPatience: a browser's window of doubt is its idle length while the
// application answers at once, grows with the lag measured, up to
// maxLag's worth, and shrinks by a quarter at a time once it answers
// quickly again.
func TestPatience(t *testing.T) {
	var m memo
	if got := m.patience(browserNavAge); got != browserNavAge {
		t.Errorf("never measured: %v, want %v", got, browserNavAge)
	}
	m.noteLag(200 * time.Microsecond) // an idle machine
	if got := m.patience(browserNavAge); got != browserNavAge+lagScale*200*time.Microsecond {
		t.Errorf("at rest: %v", got)
	}
	m.noteLag(40 * time.Millisecond) // a busy one
	if got := m.patience(browserNavAge); got != browserNavAge+lagScale*40*time.Millisecond {
		t.Errorf("busy: %v", got)
	}
	m.noteLag(time.Minute) // hung, not busy
	if got := m.patience(browserNavAge); got != browserNavAge+lagScale*maxLag {
		t.Errorf("hung: %v", got)
	}
	m.noteLag(0)
	if got, want := time.Duration(m.lag.Load()), maxLag-maxLag/4; got != want {
		t.Errorf("after one quick answer the lag is %v, want %v", got, want)
	}
	for range 100 {
		m.noteLag(200 * time.Microsecond)
	}
	if got := time.Duration(m.lag.Load()); got != 200*time.Microsecond {
		t.Errorf("after many quick answers the lag is %v", got)
	}
}
