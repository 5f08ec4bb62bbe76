package shinken_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// observeScoped observes over the wire with a scope, a target or both.
func observeScoped(ctx context.Context, c *client.Client, scope aci.Scope, target *aci.Target, diff bool) (*aci.Observation, error) {
	a := &aci.Action{Verb: aci.VerbObserve, Scope: scope, Target: target}
	if diff {
		a.Diff = &diff
	}
	r, err := c.Do(ctx, a)
	if err != nil {
		return nil, err
	}
	return r.Observation, nil
}

// TestObserveScoped narrows observe to a window by id, to the active
// window and to an element's subtree, over the wire: each shows that part
// whole and nothing else, with the refs of the unscoped view; a diff or a
// window that is not there is refused with its code.
func TestObserveScoped(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(t, nil)
	ctx := testCtx(t)
	for _, app := range []string{"notes", "form"} {
		if err := c.LaunchApp(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.Observe(ctx, &client.ObserveRequest{Desktop: true})
	if err != nil {
		t.Fatal(err)
	}
	refOf := map[string]string{} // provenance id -> ref
	for _, el := range all.Elements {
		refOf[el.Role+"\x00"+el.Name] = el.Ref
	}
	ws, err := c.ListWindows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var notes, form aci.WindowInfo
	for _, w := range ws {
		switch {
		case strings.Contains(w.Title, "Notes"):
			notes = w
		case w.Active != nil && *w.Active:
			form = w
		}
	}
	if notes.ID == 0 || form.ID == 0 {
		t.Fatalf("windows %+v", ws)
	}
	sameRefs := func(what string, o *aci.Observation) {
		t.Helper()
		for _, el := range o.Elements {
			if want := refOf[el.Role+"\x00"+el.Name]; want != "" && want != el.Ref {
				t.Errorf("%s: %s %q has ref %s, %s unscoped", what, el.Role, el.Name, el.Ref, want)
			}
		}
	}
	for _, tt := range []struct {
		name  string
		scope aci.Scope
		win   aci.WindowInfo
		other aci.WindowInfo
	}{
		{"by id, not the active window", aci.WindowScope(notes.ID), notes, form},
		{"by id, the active window", aci.WindowScope(form.ID), form, notes},
		{"the active window", aci.ScopeActiveWindow, form, notes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := observeScoped(ctx, c, tt.scope, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Elements) == 0 || o.Elements[0].Name != tt.win.Title || !strings.Contains(o.TreeText, `"`+tt.win.Title+`"`) ||
				strings.Contains(o.TreeText, `frame "`+tt.other.Title+`"`) || strings.Contains(o.TreeText, `frame (active) "`+tt.other.Title+`"`) {
				t.Fatalf("scope %s shows:\n%s", tt.scope, o.TreeText)
			}
			if *o.NodeCount != len(o.Elements) || len(o.Elements) >= len(all.Elements) {
				t.Errorf("scope %s: %d elements of %d", tt.scope, len(o.Elements), len(all.Elements))
			}
			sameRefs(string(tt.scope), o)
		})
	}

	// An element's subtree, through the client.
	frame := all.Elements[0]
	for _, el := range all.Elements {
		if el.Name == notes.Title {
			frame = el
		}
	}
	sub, err := c.Observe(ctx, &client.ObserveRequest{Subtree: frame.Ref})
	if err != nil {
		t.Fatalf("observe of %s's subtree: %v", frame.Ref, err)
	}
	if sub.Elements[0].Ref != frame.Ref || strings.Contains(sub.TreeText, form.Title) {
		t.Errorf("the subtree of %s:\n%s", frame.Ref, sub.TreeText)
	}
	sameRefs("subtree", sub)

	for _, tt := range []struct {
		name   string
		scope  aci.Scope
		target *aci.Target
		diff   bool
		code   error
	}{
		{"a diff of a window", aci.WindowScope(notes.ID), nil, true, aci.ErrInvalidAction},
		{"a window and a target", aci.WindowScope(notes.ID), aci.Ref(frame.Ref), false, aci.ErrInvalidAction},
		{"a window that is not there", aci.WindowScope(notes.ID + 1000), nil, false, aci.ErrNoSuchWindow},
		{"window 0", aci.Scope("window:0"), nil, false, aci.ErrInvalidAction},
		{"a point target", "", aci.Px(1, 1), false, aci.ErrInvalidAction},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := observeScoped(ctx, c, tt.scope, tt.target, tt.diff)
			if !errors.Is(err, tt.code) {
				t.Errorf("got %v, want %v", err, tt.code)
			}
		})
	}
}
