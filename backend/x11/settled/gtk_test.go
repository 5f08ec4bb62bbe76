package settled

import (
	"testing"

	"shinken.dev/go/shinken"
)

// TestGtkCheckThenScreenshot toggles gtk3-demo's "Enable grouping" check
// box (the Size Groups demo) and takes a screenshot at once: it differs
// from the one before, and the next observe reads the new state.
func TestGtkCheckThenScreenshot(t *testing.T) {
	r := newRig(t, false)
	r.sess.Launch(t, "gtk3-demo", "--run=sizegroup")
	_, box := r.waitElement("check box", "grouping")
	r.takeSettles()
	prev := r.shot().Hash
	checked := has(box.States, "checked")
	for i := range rounds {
		r.clickAt(box)
		s := r.shot()
		if s.Hash == prev {
			t.Fatalf("round %d: the screenshot after the click shows the old pixels (stale)", i)
		}
		prev = s.Hash
		checked = !checked
		got := find(r.observe(), "check box", "grouping")
		if got == nil || has(got.States, "checked") != checked {
			t.Fatalf("round %d: the check box reads %v, want checked=%v (stale); %s", i, got, checked, r.later("check box", "grouping"))
		}
	}
	t.Log(summary(r.takeSettles()))
}

// TestSettleWithSpinnerAndCaret clicks with gtk3-demo's spinner turning
// and zenity's caret blinking on screen: each click settles quiet, not at
// the cap, as neither holds it.
func TestSettleWithSpinnerAndCaret(t *testing.T) {
	r := newRig(t, false)
	r.sess.Launch(t, "gtk3-demo", "--run=spinner")
	r.waitElement("push button", "Play")
	r.sess.Launch(t, "zenity", "--entry", "--title=settle-caret", "--text=a caret blinks below")
	o, label := r.waitElement("label", "caret blinks")
	if e := find(o, "text", ""); e == nil || !has(e.States, "focused") {
		t.Fatalf("zenity's entry has no focus:\n%s", o.TreeText)
	}
	r.takeSettles()
	for range rounds {
		r.clickAt(label) // on a label: nothing reacts, the caret keeps blinking
	}
	ss := r.takeSettles()
	for i, s := range ss {
		if s.Settle != shinken.SettleQuiet {
			t.Fatalf("click %d settled %s (%d changes, %d ambient): %s", i, s.Settle, s.Changes, s.Ambient, summary(ss))
		}
	}
	t.Log(summary(ss))
}

func has(states []string, s string) bool {
	for _, x := range states {
		if x == s {
			return true
		}
	}
	return false
}
