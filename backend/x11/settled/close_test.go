package settled

import (
	"testing"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestGtkCloseWindowThenObserve opens gtk3-demo's Expander demo (an
// alert) from its main window and closes it with its Close button,
// observing at once: the alert is gone from the tree, every time.
func TestGtkCloseWindowThenObserve(t *testing.T) {
	r := newRig(t, false)
	r.sess.Launch(t, "gtk3-demo")
	r.waitElement("table cell", "Expander")
	r.takeSettles()
	var closes []shinken.Event
	for i := range rounds {
		// Setup: open the dialog and wait until it shows.
		o := r.observe()
		row := find(o, "table cell", "Expander")
		if row == nil {
			t.Fatalf("round %d: no Expander row:\n%s", i, o.TreeText)
		}
		// The row's own action: a double click can land as two clicks on
		// a busy machine.
		if err := r.c.InvokeAction(r.ctx, aci.Ref(row.Ref), "activate"); err != nil {
			t.Fatal(err)
		}
		do, _ := r.waitElement("label", "Something went wrong")
		var closeButton *aci.Element // the alert's, after the main window's
		for _, e := range all(do, "push button") {
			if e.Name == "Close" {
				closeButton = &e
			}
		}
		if closeButton == nil {
			t.Fatalf("round %d: the alert has no Close button:\n%s", i, do.TreeText)
		}
		// Readiness: the button where the tree places it, twice in a row
		// (the window manager places the alert as it maps it, and GTK
		// learns its place from a ConfigureNotify it may not have read).
		closeButton = r.stillRef(closeButton)
		r.takeSettles()

		// The check: close, then observe at once.
		r.clickAt(closeButton)
		o = r.observe()
		if e := find(o, "label", "Something went wrong"); e != nil || find(o, "alert", "Error") != nil {
			later := r.later("alert", "Error")
			var now []float64
			if e := byRef(r.observe(), closeButton.Ref); e != nil {
				now = e.BBox
			}
			t.Fatalf("round %d: the closed dialog is still in the tree (stale); %s; the button clicked at %v is now at %v:\n%s",
				i, later, closeButton.BBox, now, o.TreeText)
		}
		if find(o, "table cell", "Expander") == nil {
			t.Fatalf("round %d: after the close the tree shows no main window:\n%s", i, o.TreeText)
		}
		ss := r.takeSettles()
		closes = append(closes, ss...)
		for _, s := range ss {
			if s.Settle != shinken.SettleQuiet {
				t.Fatalf("round %d: the close settled %s", i, s.Settle)
			}
		}
	}
	t.Log(summary(closes))
}
