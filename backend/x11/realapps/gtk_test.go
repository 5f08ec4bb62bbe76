package realapps

import (
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestZenityForm drives a zenity form, whose fields are named only by the
// labels that point at them.
func TestZenityForm(t *testing.T) {
	d := newDesk(t)
	app := d.sess.Launch(t, "zenity", "--forms", "--title=Order", "--text=Your order",
		"--add-entry=Name", "--add-entry=Email", "--add-password=Secret",
		"--add-combo=Colour", "--combo-values=Red|Green|Blue")
	ctx := ctxT(t)
	obs := d.observe("the zenity form", func(o *aci.Observation) bool {
		return ref(o, "text", "Email") != "" && ref(o, "push button", "OK") != "" &&
			strings.Contains(o.TreeText, `(active) "Order"`) && strings.Contains(o.TreeText, `text (focused) "Name"`)
	})
	checkInteractiveLines(t, obs)
	golden(t, "zenity-form.txt", renumber(obs.TreeText))

	if err := d.c.SetValue(ctx, aci.Ref(ref(obs, "text", "Name")), "Ada Lovelace"); err != nil {
		t.Fatalf("set_value Name: %v", err)
	}
	if err := d.c.SetValue(ctx, aci.Ref(ref(obs, "password text", "Secret")), "s3cret"); err != nil {
		t.Fatalf("set_value Secret: %v", err)
	}
	if err := d.c.SetValue(ctx, aci.Ref(ref(obs, "combo box", "Colour")), "Green"); err != nil {
		t.Fatalf("set_value on the combo box: %v", err)
	}
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "text", "Email"))); err != nil {
		t.Fatal(err)
	}
	d.observe("the email field focused", func(o *aci.Observation) bool {
		e := element(o, ref(obs, "text", "Email"))
		return e != nil && e.Focused
	})
	if err := d.c.TypeText(ctx, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	d.observe("the typed email", func(o *aci.Observation) bool {
		e := element(o, ref(obs, "text", "Email"))
		return e != nil && e.Value == "ada@example.com"
	})
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "push button", "OK"))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-app.Done():
	case <-ctx.Done():
		t.Fatal("zenity did not exit after OK")
	}
	if got, want := app.Stdout(), "Ada Lovelace|ada@example.com|s3cret|Green\n"; got != want {
		t.Fatalf("zenity printed %q, want %q", got, want)
	}
}

// TestGtk3Demo reads gtk3-demo's window and drives it by refs: pick a demo
// in the tree, switch the notebook to its source, scroll the tree and read
// the demos that come into view.
func TestGtk3Demo(t *testing.T) {
	d := newDesk(t)
	d.sess.Launch(t, "gtk3-demo")
	ctx := ctxT(t)
	obs := d.observe("gtk3-demo", func(o *aci.Observation) bool {
		// The tree takes the focus once the window is active, maybe
		// after more than a settle's quiet window.
		return strings.Contains(o.TreeText, `(active) "Application Class"`) && strings.Contains(o.TreeText, "tree table (focused)")
	})
	checkInteractiveLines(t, obs)
	golden(t, "gtk3-demo.txt", renumber(obs.TreeText))

	src := ref(obs, "page tab", "Source")
	if src == "" {
		t.Fatalf("no Source tab in\n%s", obs.TreeText)
	}
	if err := d.c.Click(ctx, aci.Ref(src)); err != nil {
		t.Fatalf("click the Source tab: %v", err)
	}
	d.observe("the Source tab selected", func(o *aci.Observation) bool {
		e := element(o, src)
		return e != nil && hasState(e, "selected")
	})
	tree := ""
	for _, e := range obs.Elements {
		if e.Role == "tree table" {
			tree = e.Ref
		}
	}
	if tree == "" {
		t.Fatalf("no tree table in\n%s", obs.TreeText)
	}
	before := d.observe("the tree", func(*aci.Observation) bool { return true }).TreeText
	if err := d.c.Scroll(ctx, aci.Ref(tree), 0, 10); err != nil {
		t.Fatalf("scroll the tree: %v", err)
	}
	d.observe("demos scrolled into view", func(o *aci.Observation) bool {
		for _, l := range strings.Split(o.TreeText, "\n") {
			if strings.Contains(l, "table cell") && !strings.Contains(l, "offscreen") && !strings.Contains(before, l[strings.Index(l, " ")+1:]) {
				return true
			}
		}
		return false
	})
}
