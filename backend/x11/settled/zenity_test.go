package settled

import (
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestZenityFormsClickThenType clicks one of two entries of zenity --forms
// and types at once: the text lands in the entry clicked, every time.
func TestZenityFormsClickThenType(t *testing.T) {
	r := newRig(t, false)
	r.sess.Launch(t, "zenity", "--forms", "--title=settle-forms", "--add-entry=First", "--add-entry=Second")
	// The entries' names come from labels beside them: tell them apart by
	// place, the upper one first.
	o, _ := r.waitElement("label", "Second")
	entries := all(o, "text")
	if len(entries) != 2 {
		t.Fatalf("%d entries:\n%s", len(entries), o.TreeText)
	}
	first, second := entries[0], entries[1]
	if second.BBox[1] < first.BBox[1] {
		first, second = second, first
	}
	r.takeSettles()
	want := map[string]string{first.Ref: "", second.Ref: ""}
	for i := range rounds {
		e := first
		if i%2 == 1 {
			e = second
		}
		mark := string(rune('a' + i))
		r.clickAt(&e)
		// GTK selects an entry's text when a click gives it the focus.
		if err := r.c.Key(r.ctx, "End"); err != nil {
			t.Fatal(err)
		}
		if err := r.c.TypeText(r.ctx, mark); err != nil {
			t.Fatal(err)
		}
		want[e.Ref] += mark
		o := r.observe()
		for _, ref := range []string{first.Ref, second.Ref} {
			got := byRef(o, ref)
			if got == nil || got.Value != want[ref] {
				t.Fatalf("round %d: entry %s holds %q, want %q (stale)\n%s", i, ref, value(got), want[ref], o.TreeText)
			}
		}
	}
	t.Log(summary(r.takeSettles()))
}

// TestZenityEntryTypeThenObserve types Unicode into zenity --entry and
// observes at once: the entry holds the whole text, every time.
func TestZenityEntryTypeThenObserve(t *testing.T) {
	r := newRig(t, false)
	r.sess.Launch(t, "zenity", "--entry", "--title=settle-entry", "--text=type here")
	_, e := r.waitElement("text", "")
	r.clickAt(e)
	r.takeSettles()
	text := ""
	for i := range rounds {
		add := []string{"José ", "héllo ✓ ", "日本 ", "ß"}[i%4]
		if err := r.c.TypeText(r.ctx, add); err != nil {
			t.Fatal(err)
		}
		text += add
		o := r.observe()
		got := find(o, "text", "")
		if got == nil || got.Value != text {
			t.Fatalf("round %d: the entry holds %q, want %q (stale)", i, value(got), text)
		}
		if i%4 == 3 {
			if err := r.c.Key(r.ctx, "ctrl+a BackSpace"); err != nil {
				t.Fatal(err)
			}
			text = ""
			if got := find(r.observe(), "text", ""); got == nil || got.Value != "" {
				t.Fatalf("round %d: after ctrl+a BackSpace the entry holds %q (stale)", i, value(got))
			}
		}
	}
	t.Log(summary(r.takeSettles()))
}

func value(e *aci.Element) string {
	if e == nil {
		return "<missing>"
	}
	return e.Value
}
