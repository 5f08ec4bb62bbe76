package client_test

import (
	"strings"
	"testing"

	"shinken.dev/go/shinken/client"
)

// TestObserveWindowScope observes one window by id and the active window
// through ObserveRequest, beside a second application's window: each view
// shows its window only, with the refs of the unscoped view.
func TestObserveWindowScope(t *testing.T) {
	c, _ := waitRig(t) // the form, active
	ctx := t.Context()
	if err := c.LaunchApp(ctx, "notes"); err != nil { // now active
		t.Fatal(err)
	}
	all, err := c.Observe(ctx, &client.ObserveRequest{Desktop: true})
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for _, el := range all.Elements {
		refs[el.Role+" "+el.Name] = el.Ref
	}
	ws, err := c.ListWindows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var formID uint64
	var formTitle, notesTitle string
	for _, w := range ws {
		if w.Active != nil && *w.Active {
			notesTitle = w.Title
		} else {
			formID, formTitle = w.ID, w.Title
		}
	}
	if formID == 0 || notesTitle == "" {
		t.Fatalf("windows: %+v", ws)
	}
	for _, tt := range []struct {
		name        string
		req         client.ObserveRequest
		want, other string
	}{
		{"by id", client.ObserveRequest{Window: formID}, formTitle, notesTitle},
		{"active", client.ObserveRequest{ActiveWindow: true}, notesTitle, formTitle},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := c.Observe(ctx, &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Elements) == 0 || o.Elements[0].Name != tt.want || strings.Contains(o.TreeText, `"`+tt.other+`"`) {
				t.Fatalf("want only %q:\n%s", tt.want, o.TreeText)
			}
			for _, el := range o.Elements {
				if r := refs[el.Role+" "+el.Name]; r != "" && r != el.Ref {
					t.Errorf("%s %q: ref %s, %s unscoped", el.Role, el.Name, el.Ref, r)
				}
			}
		})
	}
	if _, err := c.Observe(ctx, &client.ObserveRequest{Window: formID, Diff: true}); err == nil {
		t.Error("a window scope with Diff: no error")
	}
}
