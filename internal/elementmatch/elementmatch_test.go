package elementmatch

import "testing"

func TestFirst(t *testing.T) {
	els := [][2]string{
		{"frame", "Form"},
		{"push button", "Not OK"},
		{"push button", "OK"},
		{"text", "Name"},
		{"text", "Full Name"},
		{"label", ""},
	}
	at := func(i int) (string, string) { return els[i][0], els[i][1] }
	for _, tt := range []struct {
		role, name string
		want       int
	}{
		{"push button", "OK", 2},  // the whole name wins over an earlier part
		{"push button", "Not", 1}, // a part of the name
		{"text", "Name", 3},       // equal, and first
		{"", "Full", 4},           // any role
		{"frame", "", 0},          // any name
		{"", "", 0},               // anything: the first
		{"check box", "", -1},     // no such role
		{"push button", "ok", -1}, // case counts
		{"push button", "Cancel", -1},
		{"label", "", 5}, // a nameless element, found by its role
		{"text", "", 3},  // any name: the first of the role
	} {
		if got := First(len(els), at, tt.role, tt.name); got != tt.want {
			t.Errorf("First(%q, %q) = %d, want %d", tt.role, tt.name, got, tt.want)
		}
	}
	if got := First(0, at, "", ""); got != -1 {
		t.Errorf("First over nothing = %d, want -1", got)
	}
}
