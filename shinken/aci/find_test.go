package aci_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

func TestFind(t *testing.T) {
	o := &aci.Observation{Elements: []aci.Element{
		{Ref: "e1", Role: "frame", Name: "Form"},
		{Ref: "e2", Role: "push button", Name: "Not OK"},
		{Ref: "e3", Role: "push button", Name: "OK"},
		{Ref: "e4", Role: "text", Name: "Name"},
		{Ref: "e5", Role: "text", Name: "Full Name"},
	}}
	for _, c := range []struct {
		role, name, want string
	}{
		{"push button", "OK", "e3"},
		{"push button", "Not", "e2"},
		{"text", "Name", "e4"},
		{"", "Full", "e5"},
		{"frame", "", "e1"},
		{"label", "", ""},
		{"push button", "Cancel", ""},
	} {
		e, err := o.Find(c.role, c.name)
		if c.want == "" {
			if !errors.Is(err, aci.ErrNoMatch) || !strings.Contains(err.Error(), strconv.Quote(c.name)) {
				t.Errorf("Find(%q, %q) = %q, %v; want an error wrapping ErrNoMatch that names the query", c.role, c.name, e.Ref, err)
			}
			continue
		}
		if err != nil || e.Ref != c.want {
			t.Errorf("Find(%q, %q) = %q, %v; want %q", c.role, c.name, e.Ref, err, c.want)
		}
	}
	if all := o.FindAll("text", "Name"); len(all) != 2 || all[0].Ref != "e4" || all[1].Ref != "e5" {
		t.Errorf("FindAll(text, Name) = %+v", all)
	}
	if all := o.FindAll("", ""); len(all) != 5 {
		t.Errorf("FindAll of everything: %d elements", len(all))
	}
}

// A wire error with the unsupported code matches errors.ErrUnsupported, as
// the backend's error it came from did.
func TestUnsupportedMatchesErrUnsupported(t *testing.T) {
	err := aci.ParseWireError("unsupported: no clipboard here")
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("%v does not match errors.ErrUnsupported", err)
	}
	if errors.Is(aci.ParseWireError("backend: broken"), errors.ErrUnsupported) {
		t.Error("a backend error matches errors.ErrUnsupported")
	}
}
