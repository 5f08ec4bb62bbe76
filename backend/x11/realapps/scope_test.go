package realapps

import (
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestObserveScopedToDialog opens gtk3-demo's interactive dialog over its
// dialogs window and observes the dialog alone, by its window id and as
// the active window: the tree is the dialog's, whole, with the refs of the
// unscoped view, and the window behind it is only named in the trailer.
func TestObserveScopedToDialog(t *testing.T) {
	d := newDesk(t)
	d.sess.Launch(t, "gtk3-demo", "--run=dialog")
	obs := d.observe("the dialogs window", func(o *aci.Observation) bool {
		return ref(o, "push button", "Interactive Dialog") != "" && strings.Contains(o.TreeText, `(active, modal) "Dialogs and Message Boxes"`)
	})
	ctx := ctxT(t)
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "push button", "Interactive Dialog"))); err != nil {
		t.Fatal(err)
	}
	all := d.observe("the interactive dialog", func(o *aci.Observation) bool {
		return strings.Contains(o.TreeText, `(active) "Interactive Dialog"`) || strings.Contains(o.TreeText, `(active, modal) "Interactive Dialog"`)
	})
	ws, err := d.c.ListWindows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var dialog aci.WindowInfo
	for _, w := range ws {
		if w.Title == "Interactive Dialog" {
			dialog = w
		}
	}
	if dialog.ID == 0 {
		t.Fatalf("no window Interactive Dialog in %+v", ws)
	}
	refOf := map[string]string{}
	for _, e := range all.Elements {
		refOf[e.Provenance["path"].(string)] = e.Ref
	}
	for _, scope := range []aci.Scope{aci.WindowScope(dialog.ID), aci.ScopeActiveWindow} {
		r, err := d.c.Do(ctx, &aci.Action{Verb: aci.VerbObserve, Scope: scope})
		if err != nil {
			t.Fatalf("observe scoped to %s: %v", scope, err)
		}
		o := r.Observation
		if len(o.Elements) == 0 || o.Elements[0].Role != "dialog" || o.Elements[0].Name != "Interactive Dialog" ||
			strings.Contains(o.TreeText, `push button "Interactive Dialog"`) || ref(o, "push button", "OK") == "" {
			t.Fatalf("observe scoped to %s shows:\n%s", scope, o.TreeText)
		}
		for _, e := range o.Elements {
			if want := refOf[e.Provenance["path"].(string)]; want != "" && want != e.Ref {
				t.Errorf("scope %s: %s %q is %s, %s unscoped", scope, e.Role, e.Name, e.Ref, want)
			}
		}
	}
}
