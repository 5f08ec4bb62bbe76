package realapps

import (
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestQt and TestQt6 drive the Qt form (../atspi/testdata/qtform.py) by
// refs, with Qt 5 and with Qt 6: Qt joins the accessibility bus and its
// tree is read like GTK's.
func TestQt(t *testing.T)  { testQt(t, "5", "qt-form.txt") }
func TestQt6(t *testing.T) { testQt(t, "6", "qt6-form.txt") }

func testQt(t *testing.T, version, goldenName string) {
	d := newDesk(t)
	app := d.qt("Qt form", version)
	ctx := ctxT(t)
	obs := d.observe("the Qt form", func(o *aci.Observation) bool {
		return ref(o, "push button", "Submit") != "" && strings.Contains(o.TreeText, `filler (active) "Qt form"`) &&
			strings.Contains(o.TreeText, `text (focused) "Name"`)
	})
	checkInteractiveLines(t, obs)
	golden(t, goldenName, renumber(obs.TreeText))

	if err := d.c.SetValue(ctx, aci.Ref(ref(obs, "text", "Name")), "Ada Lovelace"); err != nil {
		t.Fatalf("set_value Name: %v", err)
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
	if err := d.c.SetValue(ctx, aci.Ref(ref(obs, "combo box", "Red")), "Blue"); err != nil {
		t.Fatalf("set_value on the combo box: %v", err)
	}
	if err := d.c.SetValue(ctx, aci.Ref(ref(obs, "spin button", "Count")), "7"); err != nil {
		t.Fatalf("set_value on the spin box: %v", err)
	}
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "check box", "Subscribe"))); err != nil {
		t.Fatal(err)
	}
	d.observe("the check box checked", func(o *aci.Observation) bool {
		e := element(o, ref(obs, "check box", "Subscribe"))
		return e != nil && hasState(e, "checked")
	})
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "push button", "Submit"))); err != nil {
		t.Fatal(err)
	}
	d.observe("the form submitted", func(o *aci.Observation) bool { return ref(o, "label", "submitted") != "" })
	// The form prints its values before it shows "submitted".
	want := "name=Ada Lovelace\nemail=ada@example.com\ncolour=Blue\ncount=7\nlevel=0\nsubscribe=True\nsize=small\n"
	if got := app.Stdout(); got != want {
		t.Fatalf("the form printed %q, want %q", got, want)
	}
	if !strings.Contains(obs.TreeText, "hidden: ") {
		t.Errorf("the list's rows below its edge are not counted as hidden:\n%s", obs.TreeText)
	}
}
