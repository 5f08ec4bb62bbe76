package shinken_test

import (
	"errors"
	"strings"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/shinkentest"
)

// An element verb refused by the backend names the element by its ref, not
// by the backend's own identity for it.
func TestErrorsNameRefs(t *testing.T) {
	d := headless.New(nil)
	ctx := testCtx(t)
	if err := d.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	c := shinkentest.Serve(t, d, nil)
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var label string
	for _, e := range obs.Elements {
		if e.Role == "label" {
			label = e.Ref
			break
		}
	}
	if label == "" {
		t.Fatalf("no label in\n%s", obs.TreeText)
	}
	err = c.SetValue(ctx, aci.Ref(label), "x")
	var e *aci.Error
	if !errors.As(err, &e) || e.Code != aci.CodeElementNotActionable {
		t.Fatalf("set_value on a label: %v", err)
	}
	if !strings.Contains(e.Detail, label+" ") || strings.Contains(e.Detail, " w") {
		t.Errorf("the error names %q, not the ref %s", e.Detail, label)
	}
}
