package keysym

import "testing"

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"kp_enter": "KP_Enter", "KP_ENTER": "KP_Enter", "page_down": "Page_Down", "RETURN": "Return",
		"escape": "Escape", "f5": "F5", "F35": "F35", "backspace": "BackSpace", "xf86audiomute": "XF86AudioMute",
		"Control_L": "Control_L", "SPACE": "space",
	} {
		if got, ok := Fold(in); !ok || got != want {
			t.Errorf("Fold(%q) = %q, %v; want %q", in, got, ok, want)
		}
		if _, ok := Lookup(want); !ok {
			t.Errorf("Fold(%q) gave %q, which Lookup does not know", in, want)
		}
	}
	for _, in := range []string{"a", "A", "", "notakey", "f36", "ctrl"} {
		if got, ok := Fold(in); ok {
			t.Errorf("Fold(%q) = %q", in, got)
		}
	}
}
