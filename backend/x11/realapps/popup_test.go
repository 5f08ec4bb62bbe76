package realapps

import (
	"fmt"
	"strings"
	"testing"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken/aci"
)

// clickLook clicks ref and returns the first look after the ack, after
// checking the served tree against a fresh read.
func (d *desk) clickLook(what, r string) *aci.Observation {
	d.t.Helper()
	if r == "" {
		d.t.Fatalf("%s: no such element", what)
	}
	if err := d.c.Click(ctxT(d.t), aci.Ref(r)); err != nil {
		d.t.Fatalf("%s: click %s: %v", what, r, err)
	}
	o := d.look()
	d.agree(what)
	return o
}

// shown returns the ref of a visible element with role and name: showing,
// and its tree_text line marks it neither hidden nor offscreen.
func shown(o *aci.Observation, role, name string) string {
	for _, e := range o.Elements {
		if e.Role != role || e.Name != name || !hasState(&e, "showing") {
			continue
		}
		for _, l := range strings.Split(o.TreeText, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), e.Ref+" ") && !strings.Contains(l, "hidden") && !strings.Contains(l, "offscreen") {
				return e.Ref
			}
		}
	}
	return ""
}

// TestPopupMenusByRef opens a GTK menu three deep and takes its leaves,
// then the options of a combo box's pop-up, every step by ref.
func TestPopupMenusByRef(t *testing.T) {
	d := newDesk(t)
	d.sess.Launch(t, atspitest.Python(t, "gi"), testdata(t, "menus.py"))
	obs := d.observe("the menus window", func(o *aci.Observation) bool {
		return strings.Contains(o.TreeText, `(active) "Menus"`) && ref(o, "label", "status none") != ""
	})
	d.agree("the start")
	for i := range rounds {
		leaf := fmt.Sprintf("Leaf %d", i%3+1)
		o := d.clickLook("File", ref(obs, "menu", "File"))
		o = d.clickLook("More", shown(o, "menu", "More"))
		if find(o, "menu", "Deeper") == nil {
			t.Fatalf("round %d: no Deeper after More:\n%s", i, o.TreeText)
		}
		o = d.clickLook("Deeper", shown(o, "menu", "Deeper"))
		o = d.clickLook(leaf, shown(o, "menu item", leaf))
		if find(o, "label", "status "+leaf) == nil {
			t.Fatalf("round %d: the first look after %s shows no status:\n%s", i, leaf, o.TreeText)
		}
	}
}

// TestPopupComboByRef opens a GTK combo box's pop-up and takes its
// options by ref, in a window of ours and in zenity's form: the first
// look after opening shows the options visible, and after the click the
// box shows the option taken.
func TestPopupComboByRef(t *testing.T) {
	for _, app := range []string{"menus.py", "zenity"} {
		t.Run(app, func(t *testing.T) {
			d := newDesk(t)
			ready := func(o *aci.Observation) bool {
				return strings.Contains(o.TreeText, `(active) "Menus"`) && ref(o, "label", "status none") != ""
			}
			if app == "zenity" {
				d.sess.Launch(t, "zenity", "--forms", "--title=Order", "--text=Your order",
					"--add-entry=Name", "--add-combo=Colour", "--combo-values=Red|Green|Blue")
				ready = func(o *aci.Observation) bool {
					return strings.Contains(o.TreeText, `(active) "Order"`) && find(o, "combo box", "") != nil
				}
			} else {
				d.sess.Launch(t, atspitest.Python(t, "gi"), testdata(t, app))
			}
			obs := d.observe("the window", ready)
			d.agree("the start")
			box := find(obs, "combo box", "").Ref
			options := []string{"Green", "Blue", "Red"}
			for i := range rounds {
				option := options[i%len(options)]
				o := d.clickLook("the combo box", box)
				r := shown(o, "menu item", option)
				if r == "" {
					t.Fatalf("round %d: the first look after opening the combo box shows no visible %q:\n%s", i, option, o.TreeText)
				}
				o = d.clickLook(option, r)
				if e := element(o, box); e == nil || e.Name != option {
					t.Fatalf("round %d: the first look after taking %q shows the box as %+v:\n%s", i, option, e, o.TreeText)
				}
			}
		})
	}
}

// TestPopupChromiumSelectByRef opens a <select>'s pop-up in Chromium and
// takes its options by ref.
func TestPopupChromiumSelectByRef(t *testing.T) {
	d := newDesk(t)
	d.chromium("choices.html")
	obs := d.observe("the choices page", func(o *aci.Observation) bool {
		doc := find(o, "document web", "Shinken choices")
		return doc != nil && !hasState(doc, "busy") && ref(o, "combo box", "Colour") != "" && ref(o, "push button", "Item 1") != ""
	})
	d.agree("the start")
	box := ref(obs, "combo box", "Colour")
	options := []string{"Green", "Blue", "Violet", "Red"}
	for i := range rounds {
		option := options[i%len(options)]
		o := d.clickLook("the select", box)
		r := shown(o, "menu item", option)
		if r == "" {
			t.Fatalf("round %d: the first look after opening the select shows no visible %q:\n%s", i, option, o.TreeText)
		}
		o = d.clickLook(option, r)
		if find(o, "status", "Chose "+option) == nil && !strings.Contains(o.TreeText, `"Chose `+option+`"`) {
			t.Fatalf("round %d: the first look after taking %q does not show it chosen:\n%s", i, option, o.TreeText)
		}
	}
}
