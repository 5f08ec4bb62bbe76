package shinken_test

import (
	"context"
	"errors"
	"image"
	"strings"
	"testing"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// staticTree is an A11y backend serving a fixed tree, for the tree_text
// rules.
type staticTree struct{ t *shinken.Tree }

func (s *staticTree) Snapshot(context.Context, shinken.SnapshotOptions) (*shinken.Tree, error) {
	t := *s.t
	t.Nodes = append([]shinken.Node(nil), s.t.Nodes...)
	return &t, nil
}

func (s *staticTree) Perform(context.Context, string, shinken.ElementAction) error { return nil }

var showing = []string{"enabled", "sensitive", "showing", "visible"}

// page builds a browser-like tree: every node carries the browser's two
// actions, hidden chrome, a form with labelled fields, a link whose text
// repeats its name, a list with bullets and rows scrolled out of view, and
// a button across the viewport's edge.
func page() *shinken.Tree {
	acts := []string{"doDefault", "showContextMenu"}
	var nodes []shinken.Node
	add := func(parent int, role, name, value string, box image.Rectangle, states ...string) int {
		depth := 0
		if parent >= 0 {
			depth = nodes[parent].Depth + 1
		}
		if states == nil {
			states = showing
		}
		nodes = append(nodes, shinken.Node{ID: role + name + string(rune('a'+len(nodes))), Parent: parent, Depth: depth,
			Role: role, Name: name, Value: value, States: states, Actions: acts, BBox: box})
		return len(nodes) - 1
	}
	r := func(x, y, w, h int) image.Rectangle { return image.Rect(x, y, x+w, y+h) }
	app := add(-1, "application", "Browser", "", image.Rectangle{})
	win := add(app, "frame", "Page - Browser", "", r(0, 0, 800, 600))
	chrome := add(win, "panel", "", "", r(0, 0, 800, 80))
	for range 10 {
		add(chrome, "notification", "", "", image.Rectangle{}, "enabled", "sensitive")
	}
	add(chrome, "push button", "Reload", "", r(10, 10, 20, 20))
	doc := add(win, "document web", "Page", "", r(0, 80, 800, 520))
	nodes[doc].Actions = append(acts, "scrollDown")
	form := add(doc, "form", "", "", r(10, 90, 400, 100))
	para := add(form, "paragraph", "", "", r(10, 90, 400, 20))
	label := add(para, "label", "", "", r(10, 90, 40, 20))
	add(label, "static", "Name", "", r(10, 90, 40, 20))
	add(para, "entry", "Name", "Ada\uFFFC", r(60, 90, 100, 20), "enabled", "sensitive", "showing", "visible", "editable", "focusable")
	link := add(doc, "link", "Next page", "", r(10, 200, 80, 20))
	add(link, "static", "Next page", "", r(10, 200, 80, 20))
	add(doc, "static", " · ", "", r(90, 200, 10, 20))
	cell := add(doc, "table cell", "Tea", "Tea", r(10, 230, 40, 20))
	add(cell, "static", "Tea", "", r(10, 230, 40, 20))
	list := add(doc, "list", "", "", r(10, 260, 200, 400))
	for i, row := range []string{"Row 1", "Row 2", "Row 3"} {
		states := showing
		if i == 2 {
			states = []string{"enabled", "sensitive", "visible"}
		}
		item := add(list, "list item", "", "", r(10, 260+20*i, 200, 20), states...)
		add(item, "static", "• ", "", r(10, 260+20*i, 10, 20), states...)
		add(item, "static", row, "", r(20, 260+20*i, 190, 20), states...)
	}
	add(doc, "push button", "Edge", "", r(300, 590, 50, 20))
	add(doc, "push button", "Below", "", r(300, 700, 50, 20))
	return &shinken.Tree{App: "Browser", Window: "Page - Browser", Nodes: nodes}
}

func TestTreeTextRules(t *testing.T) {
	o := shinken.NewObserver(&staticTree{page()})
	obs, err := o.Observe(context.Background(), shinken.ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rules-full", obs.TreeText)
	text := obs.TreeText
	for _, want := range []string{
		"# most elements also have actions (not repeated below): doDefault,showContextMenu\n",
		`entry "Name" Value:"Ada"`,                   // U+FFFC removed; the label beside it dropped
		`link "Next page"` + "\n",                    // its text child dropped
		`table cell "Tea"` + "\n",                    // Value equal to the name dropped
		`list item "Row 1"`,                          // named by its text, the bullet dropped
		`push button (partly offscreen) "Edge"`,      // across the viewport's edge
		`push button (offscreen) "Below"`,            // below it
		"hidden: 13 elements not shown",              // ten notifications, a row and its two texts
		"document web \"Page\" Actions:scrollDown\n", // its own action kept
	} {
		if !strings.Contains(text, want) {
			t.Errorf("tree_text lacks %q:\n%s", want, text)
		}
	}
	for _, unwanted := range []string{"notification", "label", "static", "panel", "form", "paragraph", "Row 3", "\uFFFC", "·"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("tree_text shows %q:\n%s", unwanted, text)
		}
	}
	// Every element keeps its ref in the elements array.
	if len(obs.Elements) != len(page().Nodes) {
		t.Errorf("%d elements for %d nodes", len(obs.Elements), len(page().Nodes))
	}

	// The subtree of the list, hidden rows included.
	var list string
	for _, e := range obs.Elements {
		if e.Role == "list" {
			list = e.Ref
		}
	}
	sub, err := o.Observe(context.Background(), shinken.ObserveOptions{Subtree: list})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rules-subtree", sub.TreeText)
	if !strings.Contains(sub.TreeText, `list item (hidden) "Row 3"`) || strings.Contains(sub.TreeText, "Edge") {
		t.Errorf("subtree of %s:\n%s", list, sub.TreeText)
	}
	if _, err := o.Observe(context.Background(), shinken.ObserveOptions{Subtree: list, Diff: true}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Errorf("a diff of a subtree: %v, want invalid_action", err)
	}
	// After a subtree, a diff has no baseline: the full tree.
	full, err := o.Observe(context.Background(), shinken.ObserveOptions{Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	if full.Tree != "full" || full.Delta != nil {
		t.Errorf("the diff after a subtree is %s with delta %v", full.Tree, full.Delta)
	}
}

// The delta of a diff observation lists what its text does.
func TestDiffDelta(t *testing.T) {
	tree := page()
	st := &staticTree{tree}
	o := shinken.NewObserver(st)
	ctx := context.Background()
	first, err := o.Observe(ctx, shinken.ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(role, name string) string {
		for _, e := range first.Elements {
			if e.Role == role && e.Name == name {
				return e.Ref
			}
		}
		t.Fatalf("no %s %q", role, name)
		return ""
	}
	reload := ref("push button", "Reload")
	// Change the entry's value, remove the Reload button, show Row 3.
	for i := range tree.Nodes {
		n := &tree.Nodes[i]
		switch {
		case n.Role == "entry":
			n.Value = "Grace"
		case n.Role == "push button" && n.Name == "Reload":
			n.States = []string{"enabled"}
		case strings.HasPrefix(n.ID, "list item") || n.Name == "Row 3" || n.Name == "• ":
			n.States = showing
		}
	}
	diff, err := o.Observe(ctx, shinken.ObserveOptions{Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rules-diff", diff.TreeText)
	d := diff.Delta
	if d == nil {
		t.Fatalf("no delta on %s", diff.TreeText)
	}
	if len(d.Changed) != 1 || d.Changed[0].Value != "Grace" {
		t.Errorf("changed %+v", d.Changed)
	}
	if len(d.Added) != 1 || d.Added[0].Role != "list item" {
		t.Errorf("added %+v", d.Added)
	}
	if len(d.Removed) != 1 || d.Removed[0] != reload {
		t.Errorf("removed %v, want [%s]", d.Removed, reload)
	}
	for _, e := range append(d.Added, d.Changed...) {
		if !strings.Contains(diff.TreeText, e.Ref+" ") {
			t.Errorf("%s is in the delta, not in the diff text:\n%s", e.Ref, diff.TreeText)
		}
	}
}
