package realapps

import (
	"strings"
	"testing"

	"shinken.dev/go/shinken"
)

// TestZenityForm drives a zenity form, whose fields are named only by the
// labels that point at them.
func TestZenityForm(t *testing.T) {
	d := newDesk(t)
	app := d.sess.Launch(t, "zenity", "--forms", "--title=Order", "--text=Your order",
		"--add-entry=Name", "--add-entry=Email", "--add-password=Secret",
		"--add-combo=Colour", "--combo-values=Red|Green|Blue")
	ctx := ctxT(t)
	obs := d.observe("the zenity form", func(o *shinken.Observation) bool {
		return ref(o, "text", "Email") != "" && ref(o, "push button", "OK") != "" &&
			strings.Contains(o.TreeText, `(active) "Order"`)
	})
	checkInteractiveLines(t, obs)
	golden(t, "zenity-form.txt", renumber(obs.TreeText))

	if err := d.c.SetValue(ctx, ref(obs, "text", "Name"), "Ada Lovelace"); err != nil {
		t.Fatalf("set_value Name: %v", err)
	}
	if err := d.c.SetValue(ctx, ref(obs, "password text", "Secret"), "s3cret"); err != nil {
		t.Fatalf("set_value Secret: %v", err)
	}
	if err := d.c.SetValue(ctx, ref(obs, "combo box", "Colour"), "Green"); err != nil {
		t.Fatalf("set_value on the combo box: %v", err)
	}
	if err := d.c.Click(ctx, shinken.Ref(ref(obs, "text", "Email"))); err != nil {
		t.Fatal(err)
	}
	d.observe("the email field focused", func(o *shinken.Observation) bool {
		e := element(o, ref(obs, "text", "Email"))
		return e != nil && e.Focused
	})
	if err := d.c.TypeText(ctx, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	d.observe("the typed email", func(o *shinken.Observation) bool {
		e := element(o, ref(obs, "text", "Email"))
		return e != nil && e.Value == "ada@example.com"
	})
	if err := d.c.Click(ctx, shinken.Ref(ref(obs, "push button", "OK"))); err != nil {
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
