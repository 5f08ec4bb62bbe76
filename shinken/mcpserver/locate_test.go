package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/mcpserver"
)

// TestStructuredToolsByName fills and submits the form naming each element
// by its role and name instead of a ref, as a locator does: set_value,
// click_element and wait_for with exact. Both ways at once, neither, and
// a name two elements share are refused.
func TestStructuredToolsByName(t *testing.T) {
	e := newEnv(t, nil)
	e.ok(t, "set_value", map[string]any{"role": "text", "name": "Name", "value": "Ada Lovelace"})
	if v := e.node(t, "text", "Name").Value; v != "Ada Lovelace" {
		t.Fatalf("Name holds %q", v)
	}
	e.ok(t, "click_element", map[string]any{"role": "check box", "name": "Subscribe to the newsletter"})
	if !slices.Contains(e.node(t, "check box", "Subscribe to the newsletter").States, "checked") {
		t.Fatal("the check box is not checked")
	}
	if s := e.ok(t, "click_element", map[string]any{"role": "push button", "name": "Submit"}); s != `clicked push button "Submit"` {
		t.Errorf("click_element said %q", s)
	}
	want := "Submitted: Ada Lovelace <no email>, newsletter: yes."
	res := e.call(t, "wait_for", map[string]any{"role": "label", "name": want, "exact": true})
	var w mcpserver.WaitForOutput
	structured(t, res, &w)
	if res.IsError || w.Element == nil || w.Element.Name != want {
		t.Fatalf("wait_for exact: %s %+v", text(res), w)
	}
	e.ok(t, "wait_for", map[string]any{"role": "label", "name": "Fill in the form and press Submit.", "exact": true, "gone": true})
	// exact: a part of the name is not the name.
	e.fails(t, "wait_for", map[string]any{"role": "label", "name": "Submitted", "exact": true, "timeout_ms": 100}, aci.CodeTimeout)

	if s := e.fails(t, "click_element", map[string]any{"name": "Name"}, aci.CodeInvalidAction); !strings.Contains(s, `2 elements match: e2 label "Name"; e3 text "Name"`) {
		t.Errorf("two matches: %s", s)
	}
	e.fails(t, "click_element", map[string]any{"ref": "e7", "role": "push button"}, aci.CodeInvalidAction)
	e.fails(t, "set_value", map[string]any{"value": "x"}, aci.CodeInvalidAction)
}
