package atspi

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestElementVerbs drives testdata/widgets.py through the edge cases of
// invoke_action and set_value.
func TestElementVerbs(t *testing.T) {
	s := atspitest.Start(t)
	script, err := filepath.Abs(filepath.Join("testdata", "widgets.py"))
	if err != nil {
		t.Fatal(err)
	}
	s.Launch(t, atspitest.Python(t, "gi"), script)
	c := connect(t, s, nil)
	active := shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}
	tree := waitTree(t, c, active, "the widgets", func(tr *shinken.Tree) bool {
		return find(tr, "slider", "") != nil && find(tr, "spin button", "") != nil && find(tr, "push button", "Plain") != nil
	})
	checkShape(t, tree)
	var readonly *shinken.Node
	for i, n := range tree.Nodes {
		if n.Role == "text" && !slices.Contains(n.States, "editable") {
			readonly = &tree.Nodes[i]
		}
	}
	slider, spin := find(tree, "slider", ""), find(tree, "spin button", "")
	button, label := find(tree, "push button", "Plain"), find(tree, "label", "Just text")
	if readonly == nil || label == nil {
		t.Fatalf("no read-only entry or label:\n%s", dump(tree))
	}
	if slider.Value != "0" || spin.Value != "0" {
		t.Errorf("slider value %q, spin button value %q, want 0 and 0", slider.Value, spin.Value)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	do := func(n *shinken.Node, act shinken.ElementAction) error { return c.Perform(ctx, n.ID, act) }
	set := func(text string) shinken.ElementAction {
		return shinken.ElementAction{Op: shinken.OpSetValue, Text: text}
	}

	for _, tc := range []struct {
		what string
		n    *shinken.Node
		act  shinken.ElementAction
		want error // nil, or the sentinel the error wraps
	}{
		{"slider in range", slider, set("7"), nil},
		{"spin button", spin, set(" 42 "), nil},
		{"button's first action", button, shinken.ElementAction{Op: shinken.OpInvoke}, nil},
		{"button by name", button, shinken.ElementAction{Op: shinken.OpInvoke, Action: "click"}, nil},
		{"slider out of range", slider, set("50"), aci.ErrElementNotActionable},
		{"slider given words", slider, set("lots"), aci.ErrElementNotActionable},
		{"read-only entry", readonly, set("changed"), aci.ErrElementNotActionable},
		{"label set", label, set("x"), aci.ErrElementNotActionable},
		{"label invoked", label, shinken.ElementAction{Op: shinken.OpInvoke}, aci.ErrElementNotActionable},
		{"label's named action", label, shinken.ElementAction{Op: shinken.OpInvoke, Action: "click"}, aci.ErrNoSuchAction},
		{"unknown operation", button, shinken.ElementAction{Op: 99}, aci.ErrInvalidAction},
	} {
		err := do(tc.n, tc.act)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: %v", tc.what, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: err = %v, want %v", tc.what, err, tc.want)
		}
	}
	// The application kept its own value: the typed error says which.
	var na *NotAppliedError
	if err := do(slider, set("50")); !errors.As(err, &na) || na.Want != "50" || na.Got != "10" {
		t.Errorf("out of range: %v (%+v), want a NotAppliedError reading 10", err, na)
	}
	if err := do(readonly, set("changed")); !errors.As(err, &na) || na.Got != "fixed" {
		t.Errorf("read-only: %v, want a NotAppliedError reading fixed", err)
	}
	after := waitTree(t, c, active, "the values set", func(tr *shinken.Tree) bool {
		return find(tr, "spin button", "").Value == "42" && find(tr, "slider", "").Value == "10"
	})
	if n := find(after, "spin button", ""); n.ID != spin.ID {
		t.Errorf("the spin button's ID changed: %s then %s", spin.ID, n.ID)
	}

	// IDs that name nothing are stale.
	for _, id := range []string{"never-issued", ":1.999:/org/a11y/atspi/accessible/1",
		slider.Provenance["bus"].(string) + ":/org/a11y/atspi/accessible/999999"} {
		if err := c.Perform(ctx, id, shinken.ElementAction{Op: shinken.OpInvoke}); !errors.Is(err, aci.ErrStaleElementRef) {
			t.Errorf("Do(%q): err = %v, want ErrStaleElementRef", id, err)
		}
	}
}
