package settled

import (
	"path/filepath"
	"runtime"
	"testing"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// qtForm starts the Qt form (atspi/testdata/qtform.py) with PyQt5
// (version "5") or PyQt6 ("6").
func qtForm(t testing.TB, version string) *rig {
	r := newRig(t, false)
	py := atspitest.Python(t, "PyQt"+version+".QtWidgets")
	_, file, _, _ := runtime.Caller(0)
	r.sess.LaunchEnv(t, []string{"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1"}, py,
		filepath.Join(filepath.Dir(file), "..", "atspi", "testdata", "qtform.py"), "Qt settle", version)
	return r
}

// TestQt5ClickThenType and TestQt6ClickThenType toggle a Qt check box by
// ref and type into a line edit, rounds times each: every action settles on
// a quiet UI, not the cap (Qt answers the settle's ping to the root with
// StructureNotify, which the backend did not select, so every Qt action
// waited out the cap), and the first look shows it.
func TestQt5ClickThenType(t *testing.T) { qtClickThenType(t, "5") }
func TestQt6ClickThenType(t *testing.T) { qtClickThenType(t, "6") }

func qtClickThenType(t *testing.T, version string) {
	r := qtForm(t, version)
	o, box := r.waitElement("check box", "Subscribe")
	name := find(o, "text", "Name")
	if name == nil {
		t.Fatalf("no Name field:\n%s", o.TreeText)
	}
	checked := has(box.States, "checked")
	if err := r.c.Click(r.ctx, aci.Ref(name.Ref)); err != nil {
		t.Fatal(err)
	}
	r.takeSettles()
	text := ""
	for i := range rounds {
		checked = !checked
		if err := r.c.Click(r.ctx, aci.Ref(box.Ref)); err != nil {
			t.Fatal(err)
		}
		if e := byRef(r.observe(), box.Ref); e == nil || has(e.States, "checked") != checked {
			t.Fatalf("round %d: the first look after the click shows the box %+v, want checked=%v", i, e, checked)
		}
		if err := r.c.Click(r.ctx, aci.Ref(name.Ref)); err != nil {
			t.Fatal(err)
		}
		k := string(rune('a' + i%26))
		text += k
		if err := r.c.TypeText(r.ctx, k); err != nil {
			t.Fatal(err)
		}
		if e := byRef(r.observe(), name.Ref); e == nil || value(e) != text {
			t.Fatalf("round %d: the first look after typing shows the field %+v, want %q", i, e, text)
		}
		for _, s := range r.takeSettles() {
			if s.Settle != shinken.SettleQuiet {
				t.Fatalf("round %d: %s settled %s after %v", i, s.Verb, s.Settle, took(s))
			}
		}
	}
}
