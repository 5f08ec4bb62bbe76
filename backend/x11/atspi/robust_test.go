package atspi

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// appBus returns the bus name of the application named name in tree.
func appBus(tree *shinken.Tree, name string) string {
	for _, n := range tree.Nodes {
		if n.Depth == 0 && n.Name == name {
			return n.Provenance["bus"].(string)
		}
	}
	return ""
}

// launchRows starts testdata/rows.py.
func launchRows(t *testing.T, s *atspitest.Session, rows, kind string) *atspitest.App {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "rows.py"))
	if err != nil {
		t.Fatal(err)
	}
	return s.Launch(t, atspitest.Python(t, "gi"), script, rows, kind)
}

func desktop() shinken.SnapshotOptions { return shinken.SnapshotOptions{Scope: shinken.TreeDesktop} }

// TestKilledMidWalk kills an application after the walk read its structure
// and before it read the details: the snapshot leaves it out, says so, and
// still returns the other application.
func TestKilledMidWalk(t *testing.T) {
	s := atspitest.Start(t)
	s.Launch(t, "zenity", "--entry", "--title=Survivor", "--text=Still here")
	victim := launchRows(t, s, "300", "listbox")
	// Every walk reads every node (NoCache): with the mirror current and
	// no event, the details would need no call, and the application's
	// death after the structure would be as after the snapshot.
	c := connect(t, s, &Options{NoCache: true})
	tree := waitTree(t, c, desktop(), "both applications", func(tr *shinken.Tree) bool {
		return appBus(tr, "rows.py") != "" && find(tr, "push button", "OK") != nil
	})
	bus := appBus(tree, "rows.py")
	c.testHookAfterStructure = func(b string) {
		if b == bus {
			victim.Kill()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	tree, err := c.Snapshot(ctx, desktop())
	if err != nil {
		t.Fatalf("Snapshot with an application dying mid-walk: %v", err)
	}
	checkShape(t, tree)
	if find(tree, "push button", "OK") == nil || appBus(tree, "zenity") == "" {
		t.Fatalf("the surviving application is missing:\n%s", dump(tree))
	}
	if appBus(tree, "rows.py") != "" {
		t.Fatalf("the dead application is in the tree:\n%s", dump(tree))
	}
	if !tree.Truncated || !strings.Contains(tree.TruncatedWhy, bus) {
		t.Fatalf("truncated %v %q, want a reason naming %s", tree.Truncated, tree.TruncatedWhy, bus)
	}
	t.Logf("truncated: %s", tree.TruncatedWhy)
	c.testHookAfterStructure = nil
	// The next snapshot no longer knows the application: nothing is missing.
	tree, err = c.Snapshot(ctx, desktop())
	if err != nil || tree.Truncated || appBus(tree, "zenity") == "" {
		t.Fatalf("after the death: err %v, truncated %v %q", err, tree.Truncated, tree.TruncatedWhy)
	}
}

// TestHungApp freezes an application: a snapshot gives up on it after its
// timeout, returns the others and says why; the following snapshots skip it
// at once until it answers again.
func TestHungApp(t *testing.T) {
	s := atspitest.Start(t)
	s.Launch(t, "zenity", "--entry", "--title=Awake", "--text=Awake")
	sleeper := launchRows(t, s, "10", "box")
	c := connect(t, s, &Options{AppTimeout: 1500 * time.Millisecond, CallTimeout: 500 * time.Millisecond,
		HungBackoff: 300 * time.Millisecond})
	tree := waitTree(t, c, desktop(), "both applications", func(tr *shinken.Tree) bool {
		return appBus(tr, "rows.py") != "" && find(tr, "push button", "OK") != nil
	})
	bus := appBus(tree, "rows.py")
	if err := sleeper.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	// Its timeout, lengthened by the lag measured before it stopped (a
	// hang guard for the snapshot: the point is that it gives up).
	limit := 2 * c.appTimeout(c.appFor(bus))
	start := time.Now()
	tree, err := c.Snapshot(ctx, desktop())
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Snapshot with a hung application: %v", err)
	}
	if took > limit {
		t.Errorf("the snapshot took %v with a 1.5 s application timeout (%v with its lag)", took, limit/2)
	}
	if find(tree, "push button", "OK") == nil || appBus(tree, "rows.py") != "" {
		t.Fatalf("want the awake application only:\n%s", dump(tree))
	}
	if !tree.Truncated || !strings.Contains(tree.TruncatedWhy, bus) {
		t.Fatalf("truncated %v %q, want a reason naming %s", tree.Truncated, tree.TruncatedWhy, bus)
	}
	t.Logf("took %v, truncated: %s", took, tree.TruncatedWhy)
	start = time.Now()
	tree, err = c.Snapshot(ctx, desktop())
	if err != nil || !tree.Truncated || time.Since(start) > time.Second {
		t.Fatalf("a snapshot right after: err %v, truncated %v, took %v; want it marked and fast", err, tree.Truncated, time.Since(start))
	}
	if err := sleeper.Cont(); err != nil {
		t.Fatal(err)
	}
	waitTree(t, c, desktop(), "the application answering again", func(tr *shinken.Tree) bool {
		return appBus(tr, "rows.py") == bus && !tr.Truncated
	})
}

// TestAppsComeAndGo starts and stops applications between snapshots.
func TestAppsComeAndGo(t *testing.T) {
	s := atspitest.Start(t)
	first := s.Launch(t, "zenity", "--entry", "--title=First", "--text=First")
	c := connect(t, s, nil)
	waitTree(t, c, desktop(), "the first application", func(tr *shinken.Tree) bool {
		return find(tr, "dialog", "First") != nil
	})
	s.Launch(t, "zenity", "--entry", "--title=Second", "--text=Second")
	waitTree(t, c, desktop(), "the second application", func(tr *shinken.Tree) bool {
		return find(tr, "dialog", "First") != nil && find(tr, "dialog", "Second") != nil
	})
	first.Kill()
	tree := waitTree(t, c, desktop(), "the first application gone", func(tr *shinken.Tree) bool {
		return find(tr, "dialog", "First") == nil && find(tr, "dialog", "Second") != nil
	})
	checkShape(t, tree)
	if tree.Truncated {
		t.Errorf("an application that quit between snapshots truncates the next: %q", tree.TruncatedWhy)
	}
	active := waitTree(t, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "the second application active",
		func(tr *shinken.Tree) bool { return tr.Window == "Second" })
	if active.App != "zenity" || slices.Contains(active.Others, "Second") {
		t.Errorf("active app %q, others %q", active.App, active.Others)
	}
}

// TestOthersAndActive checks TreeActiveApp against two applications: the
// tree holds the active one, Others the other's window.
func TestOthersAndActive(t *testing.T) {
	s := atspitest.Start(t)
	behind := s.Launch(t, "zenity", "--entry", "--title=Behind", "--text=Behind")
	c := connect(t, s, nil)
	waitTree(t, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "the first window active",
		func(tr *shinken.Tree) bool { return tr.Window == "Behind" })
	launchRows(t, s, "5", "box")
	tree := waitTree(t, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "the rows window active",
		func(tr *shinken.Tree) bool { return tr.Window == "Rows 5 box" })
	checkShape(t, tree)
	if tree.App != "rows.py" || !slices.Contains(tree.Others, "Behind") || find(tree, "dialog", "Behind") != nil {
		t.Fatalf("app %q, others %q:\n%s", tree.App, tree.Others, dump(tree))
	}
	// A window manager's word (ActivePID) overrides AT-SPI's states.
	hinted := connect(t, s, &Options{ActivePID: func(context.Context) (int, error) { return behind.Cmd.Process.Pid, nil }})
	tree = waitTree(t, hinted, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "the hinted application",
		func(tr *shinken.Tree) bool { return tr.Window == "Behind" })
	if tree.App != "zenity" || !slices.Contains(tree.Others, "Rows 5 box") {
		t.Fatalf("with ActivePID: app %q, others %q", tree.App, tree.Others)
	}
}

// TestBudgets cuts a tree by its node budget and its depth cap.
func TestBudgets(t *testing.T) {
	s := atspitest.Start(t)
	launchRows(t, s, "50", "listbox")
	c := connect(t, s, nil)
	full := waitTree(t, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "the rows", func(tr *shinken.Tree) bool {
		return len(tr.Nodes) >= 100
	})
	if full.Truncated {
		t.Fatalf("a 100-node tree is truncated: %q", full.TruncatedWhy)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for _, max := range []int{1, 2, 40} {
		tree, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp, MaxNodes: max})
		if err != nil {
			t.Fatal(err)
		}
		checkShape(t, tree)
		if len(tree.Nodes) != max || !tree.Truncated || !strings.Contains(tree.TruncatedWhy, "node budget") {
			t.Fatalf("MaxNodes %d: %d nodes, truncated %v %q", max, len(tree.Nodes), tree.Truncated, tree.TruncatedWhy)
		}
		for i, n := range tree.Nodes {
			if n.ID != full.Nodes[i].ID {
				t.Fatalf("MaxNodes %d: node %d is %s, not the full tree's %s: the budget must cut a prefix", max, i, n.ID, full.Nodes[i].ID)
			}
		}
	}
	tree, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp, MaxDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, tree)
	deepest := 0
	for _, n := range tree.Nodes {
		deepest = max(deepest, n.Depth)
	}
	if deepest != 3 || !tree.Truncated || !strings.Contains(tree.TruncatedWhy, "depth cap") {
		t.Fatalf("MaxDepth 3: deepest %d, truncated %v %q", deepest, tree.Truncated, tree.TruncatedWhy)
	}
}

// TestWatch checks that an edit is reported and that the channel closes
// with its context.
func TestWatch(t *testing.T) {
	s := atspitest.Start(t)
	s.Launch(t, "zenity", "--entry", "--title=Watched", "--text=Watched")
	c := connect(t, s, nil)
	_, entry, _, _, _ := zenityEntry(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	ch := c.Watch(ctx)
	other := c.Watch(context.Background()) // closed by Close
	for drained := false; !drained; {
		select {
		case <-ch:
		default:
			drained = true
		}
	}
	dctx, dcancel := context.WithTimeout(context.Background(), waitFor)
	defer dcancel()
	if err := c.Perform(dctx, entry.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "changed"}); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatal("the channel closed early")
		}
	case <-dctx.Done():
		t.Fatal("no change reported after set_value")
	}
	cancel()
	for range ch {
	}
	c.Close()
	for range other {
	}
	if _, ok := <-c.Watch(context.Background()); ok {
		t.Fatal("Watch after Close delivered a value")
	}
	if _, err := c.Snapshot(dctx, desktop()); !errors.Is(err, aci.ErrClosed) {
		t.Fatalf("Snapshot after Close: %v", err)
	}
}

// TestUnavailable connects where there is no accessibility bus.
func TestUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	dir := t.TempDir()
	for _, o := range []Options{
		{Address: "unix:path=" + filepath.Join(dir, "none"), SessionBus: "unix:path=" + filepath.Join(dir, "nobus")},
		{SessionBus: "unix:path=" + filepath.Join(dir, "nobus"), Display: ":none"},
		{Address: "tcp:host=localhost,port=1", SessionBus: "unix:path=" + filepath.Join(dir, "nobus")},
	} {
		t.Setenv("AT_SPI_BUS_ADDRESS", "")
		_, err := Connect(ctx, &o)
		if !errors.Is(err, aci.ErrA11yUnavailable) {
			t.Fatalf("Connect(%+v): err = %v, want ErrA11yUnavailable", o, err)
		}
		if got := aci.WireError(err); !strings.HasPrefix(got, "a11y_unavailable: ") || len(got) < 30 {
			t.Fatalf("wire error %q does not say why", got)
		}
	}
}

// TestLimitsFollowLag: an application's walk and reply limits grow with
// its measured lag, a hundred times the ping's round trip, up to the lag
// that says hung; at rest they are as set.
func TestLimitsFollowLag(t *testing.T) {
	c := &Client{opts: Options{AppTimeout: 2 * time.Second, CallTimeout: time.Second}}
	a := &app{}
	for _, tc := range []struct {
		lag        time.Duration
		walk, call time.Duration
	}{
		{0, 2 * time.Second, time.Second},
		{20 * time.Millisecond, 4 * time.Second, 3 * time.Second},
		{time.Second, 12 * time.Second, 11 * time.Second}, // past maxLag: hung, not busier
	} {
		a.memo.lag.Store(0)
		a.memo.noteLag(tc.lag)
		if w, k := c.appTimeout(a), c.callTimeout(a); w != tc.walk || k != tc.call {
			t.Errorf("lag %v: walk %v, reply %v; want %v, %v", tc.lag, w, k, tc.walk, tc.call)
		}
	}
}
