package client

import (
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestCover checks which elements hide another from the pointer: a
// visible pop-up item over its centre, outside its subtree and not
// holding it. The tree is Firefox's form with its form-history
// suggestions open over the Colour box.
func TestCover(t *testing.T) {
	tree := "# app \"Firefox\" rev 84\n" +
		"e1 application \"Firefox\"\n" +
		"  e2 frame (active) \"Shinken form\"\n" +
		"    e166 menu\n" +
		"      e167 menu item \"ada@example.com\"\n" +
		"    e75 document web \"Shinken form\"\n" +
		"      e87 combo box (expandable) \"Colour\"\n" +
		"        e88 menu\n" +
		"          e89 menu item (hidden) \"Red\"\n" +
		"          e90 menu item \"Green\"\n" +
		"      e92 check box \"Gift wrap\"\n" +
		"    e200 menu\n" +
		"      e201 menu item \"Open\"\n" +
		"        e202 menu\n" +
		"          e203 menu item \"Recent\"\n" +
		"hidden: 3 elements not shown\n" +
		"focus: e84\n"
	el := func(ref, role string, x, y, w, h float64, states ...string) aci.Element {
		return aci.Element{Ref: ref, Role: role, BBox: []float64{x, y, w, h}, States: append(states, "showing")}
	}
	all := []aci.Element{
		el("e167", "menu item", 67, 251, 152, 30),
		el("e87", "combo box", 62, 250, 70, 23),
		el("e88", "menu", 62, 250, 70, 23),
		el("e89", "menu item", 10, 285, 30, 20), // over the check box, hidden in the tree text
		el("e90", "menu item", 62, 250, 70, 23),
		el("e92", "check box", 15, 290, 13, 13),
		el("e201", "menu item", 400, 100, 100, 20),
		el("e203", "menu item", 400, 100, 100, 20),
	}
	f := &found{obs: &aci.Observation{TreeText: tree}, all: all}
	for _, c := range []struct {
		ref, want string
	}{
		{"e87", "e167"}, // the suggestions over the box; its own choices are none
		{"e92", ""},     // a hidden item over the check box is none
		{"e90", "e167"}, // a choice of the box, hidden by the suggestions too
		{"e201", ""},    // a submenu's item over its own holder
		{"e203", ""},    // held by e201, which lies over it
	} {
		var e *aci.Element
		for i := range all {
			if all[i].Ref == c.ref {
				e = &all[i]
			}
		}
		got := ""
		if o := f.cover(e); o != nil {
			got = o.Ref
		}
		if got != c.want {
			t.Errorf("cover(%s) = %q, want %q", c.ref, got, c.want)
		}
	}
	if within(tree, "e2", "e84") {
		t.Error("the focus line counted as a node of e2's subtree")
	}
	if !within(tree, "e2", "e203") || within(tree, "e75", "e201") {
		t.Error("within misread the indentation")
	}
}
