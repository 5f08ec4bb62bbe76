package atspi

import (
	"reflect"
	"testing"
)

func TestRoleNames(t *testing.T) {
	for n, want := range map[uint32]string{
		0: "invalid", 23: "frame", 29: "label", 43: "push button", 61: "text", 75: "application",
		79: "entry", 98: "list box", 114: "rating", 115: "timer", 129: "push button menu", 130: "switch",
		131: "role 131",
	} {
		if got := roleName(n); got != want {
			t.Errorf("roleName(%d) = %q, want %q", n, got, want)
		}
	}
	if len(roleNames) != 131 {
		t.Errorf("%d role names, want 131 (0 to 130)", len(roleNames))
	}
}

func TestStateNames(t *testing.T) {
	var s stateSet
	for _, n := range []int{stateActive, stateEditable, stateFocused, stateShowing, stateManagesDescendants, 43, 60} {
		s[n/32] |= 1 << (n % 32)
	}
	want := []string{"active", "editable", "focused", "showing", "manages descendants", "read only", "state 60"}
	if got := s.names(); !reflect.DeepEqual(got, want) {
		t.Errorf("names() = %q, want %q", got, want)
	}
	if len(stateNames) != 44 {
		t.Errorf("%d state names, want 44", len(stateNames))
	}
	if (stateSet{}).names() != nil {
		t.Error("an empty set has names")
	}
}
