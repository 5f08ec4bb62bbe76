package shinken_test

import (
	"errors"
	"testing"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestTreeFindAgreesWithObservation: a backend's tree and the agent's
// observation of it answer every query alike, the same element or the same
// error.
func TestTreeFindAgreesWithObservation(t *testing.T) {
	parts := [][2]string{
		{"frame", "Form"},
		{"push button", "Not OK"},
		{"push button", "OK"},
		{"text", "Name"},
		{"text", "Full Name"},
		{"label", ""},
	}
	tree := &shinken.Tree{}
	obs := &aci.Observation{}
	for i, p := range parts {
		id := string(rune('a' + i))
		tree.Nodes = append(tree.Nodes, shinken.Node{ID: id, Role: p[0], Name: p[1]})
		obs.Elements = append(obs.Elements, aci.Element{Ref: id, Role: p[0], Name: p[1]})
	}
	for _, tt := range []struct {
		role, name, want string // want "" for no match
	}{
		{"push button", "OK", "c"},
		{"push button", "Not", "b"},
		{"text", "Name", "d"},
		{"", "Full", "e"},
		{"label", "", "f"},
		{"", "", "a"},
		{"push button", "Cancel", ""},
		{"check box", "", ""},
	} {
		n, nerr := tree.Find(tt.role, tt.name)
		e, eerr := obs.Find(tt.role, tt.name)
		if tt.want == "" {
			if !errors.Is(nerr, aci.ErrNoMatch) || !errors.Is(eerr, aci.ErrNoMatch) || nerr.Error() != eerr.Error() {
				t.Errorf("Find(%q, %q): tree %v, observation %v; want the same error wrapping ErrNoMatch", tt.role, tt.name, nerr, eerr)
			}
			continue
		}
		if nerr != nil || eerr != nil || n.ID != tt.want || e.Ref != tt.want {
			t.Errorf("Find(%q, %q): tree %q (%v), observation %q (%v); want %q", tt.role, tt.name, n.ID, nerr, e.Ref, eerr, tt.want)
		}
	}
}
