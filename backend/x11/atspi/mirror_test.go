package atspi

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken"
)

// render describes a tree for comparison: every node's place, role, name,
// states, value and extents.
func render(tree *shinken.Tree) string {
	var b strings.Builder
	for _, n := range tree.Nodes {
		fmt.Fprintf(&b, "%s%s %s %q %v %q %v\n", strings.Repeat(" ", n.Depth), n.ID, n.Role, n.Name, n.States, n.Value, n.BBox)
	}
	return b.String()
}

// firstDiff returns the first line where two renderings differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  mirror: %s\n  fresh:  %s", i+1, gl, wl)
		}
	}
	return ""
}

// TestMirrorFollowsChanges checks that the mirror never gives a stale
// tree: after each change the application makes (rows added and removed,
// names, visibility, a label moved to another parent and back, a
// check box, typed text), once a Client that reads
// everything afresh sees the change and the application is still, the
// mirrored Client's very next snapshot is the same tree. It also checks
// that a snapshot with nothing changed asks the application little.
func TestMirrorFollowsChanges(t *testing.T) {
	s := atspitest.Start(t)
	script, err := filepath.Abs(filepath.Join("testdata", "changes.py"))
	if err != nil {
		t.Fatal(err)
	}
	s.Launch(t, atspitest.Python(t, "gi"), script)
	c := connect(t, s, nil)
	fresh := connect(t, s, &Options{NoCache: true})
	active := shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	waitTree(t, c, active, "the window", func(tr *shinken.Tree) bool {
		return find(tr, "label", "status 0") != nil && len(tr.Nodes) > 1 && tr.Nodes[1].BBox.Dx() > 0
	})

	// same compares the mirrored Client's next snapshot with fresh reads
	// taken just before and after it, once two fresh reads agree.
	same := func(what string) *shinken.Tree {
		t.Helper()
		for {
			before, err := fresh.Snapshot(ctx, active)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Snapshot(ctx, active)
			if err != nil {
				t.Fatal(err)
			}
			after, err := fresh.Snapshot(ctx, active)
			if err != nil {
				t.Fatal(err)
			}
			if render(before) != render(after) {
				continue // the application was still changing
			}
			if d := firstDiff(render(got), render(before)); d != "" {
				t.Fatalf("after %s, the mirror differs from a fresh read at %s", what, d)
			}
			return got
		}
	}
	tree := same("the start")

	calls := c.calls.Load()
	if _, err := c.Snapshot(ctx, active); err != nil {
		t.Fatal(err)
	}
	if n := c.calls.Load() - calls; n*4 > uint64(len(tree.Nodes)) {
		t.Errorf("a snapshot of %d unchanged nodes made %d calls", len(tree.Nodes), n)
	}

	press := func(name string) {
		t.Helper()
		n := find(tree, "push button", name)
		if n == nil {
			t.Fatalf("no button %q:\n%s", name, dump(tree))
		}
		if err := c.Perform(ctx, n.ID, shinken.ElementAction{Op: shinken.OpInvoke}); err != nil {
			t.Fatalf("pressing %s: %v", name, err)
		}
	}
	// until waits for a fresh read to show a change, then compares.
	until := func(what string, ok func(*shinken.Tree) bool) {
		t.Helper()
		waitTree(t, fresh, active, what, ok)
		tree = same(what)
	}
	rows := func(n int) func(*shinken.Tree) bool {
		return func(tr *shinken.Tree) bool {
			return find(tr, "label", fmt.Sprintf("Row %d", n)) != nil && find(tr, "label", fmt.Sprintf("Row %d", n+1)) == nil
		}
	}
	press("Add")
	until("a row added", rows(1))
	press("Add")
	until("a second row added", rows(2))
	press("Remove")
	until("a row removed", rows(1))
	press("Rename")
	until("the window renamed", func(tr *shinken.Tree) bool { return find(tr, "label", "status 1") != nil })
	showing := func(want bool) func(*shinken.Tree) bool {
		return func(tr *shinken.Tree) bool {
			n := find(tr, "label", "status 1")
			return n != nil && strings.Contains(strings.Join(n.States, ","), "showing") == want
		}
	}
	press("Hide")
	until("the status hidden", showing(false))
	press("Hide")
	until("the status shown", showing(true))
	parentName := func(tr *shinken.Tree, role, name string) string {
		for _, n := range tr.Nodes {
			if n.Role == role && n.Name == name && n.Parent >= 0 {
				return tr.Nodes[n.Parent].ID
			}
		}
		return ""
	}
	home := parentName(tree, "label", "status 1")
	press("Move")
	until("the status moved", func(tr *shinken.Tree) bool {
		p := parentName(tr, "label", "status 1")
		return p != "" && p != home
	})
	press("Move")
	until("the status moved back", func(tr *shinken.Tree) bool { return parentName(tr, "label", "status 1") == home })
	check := find(tree, "check box", "Check")
	if check == nil {
		t.Fatalf("no check box:\n%s", dump(tree))
	}
	if err := c.Perform(ctx, check.ID, shinken.ElementAction{Op: shinken.OpInvoke}); err != nil {
		t.Fatal(err)
	}
	until("the box checked", func(tr *shinken.Tree) bool {
		n := find(tr, "check box", "Check")
		return n != nil && strings.Contains(strings.Join(n.States, ","), "checked")
	})
	entry := editable(tree)
	if entry == nil {
		t.Fatalf("no entry:\n%s", dump(tree))
	}
	if err := c.Perform(ctx, entry.ID, shinken.ElementAction{Op: shinken.OpSetValue, Text: "typed"}); err != nil {
		t.Fatal(err)
	}
	until("the text set", func(tr *shinken.Tree) bool { return editable(tr) != nil && editable(tr).Value == "typed" })
}

// TestHiddenEdges checks which hidden children of a browser's container
// the mirror reads again on every walk, for a scroll that brings them back
// into view with no event: those next to a showing sibling, or the first
// and the last when none shows; none under a hidden container.
func TestHiddenEdges(t *testing.T) {
	var showing stateSet
	showing[stateShowing/32] |= 1 << (stateShowing % 32)
	cases := []struct {
		name      string
		parent    bool   // the container shows
		kids      string // one letter a child: s showing, h hidden
		wantEdges string // the hidden children read again, by index
	}{
		{"scrolled down", true, "hhhsssshhh", "2,7"},
		{"at the top", true, "sssshhhh", "4"},
		{"at the bottom", true, "hhhhssss", "3"},
		{"a gap", true, "shsh", "1,3"},
		{"all showing", true, "ssss", ""},
		{"none showing", true, "hhhh", "0,3"},
		{"one hidden child", true, "h", "0"},
		{"a hidden container", false, "hhsshh", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs := map[string]*rec{}
			parent := &rec{path: "/p", kidsKnown: true, mirrored: true}
			if c.parent {
				parent.states = showing
			}
			recs[parent.path] = parent
			for i, s := range c.kids {
				k := &rec{path: fmt.Sprintf("/k%d", i), parent: parent.path, mirrored: true}
				if s == 's' {
					k.states = showing
				}
				recs[k.path] = k
				parent.kids = append(parent.kids, k.path)
			}
			var got []string
			for _, k := range hiddenEdges(recs, parent) {
				got = append(got, strings.TrimPrefix(k.path, "/k"))
			}
			if g := strings.Join(got, ","); g != c.wantEdges {
				t.Errorf("kids %s: read again %q, want %q", c.kids, g, c.wantEdges)
			}
		})
	}
}
