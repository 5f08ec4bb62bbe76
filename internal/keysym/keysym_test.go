package keysym_test

import (
	"testing"
	"unicode/utf8"

	"shinken.dev/go/internal/keysym"
)

func TestLookup(t *testing.T) {
	for name, want := range map[string]uint32{
		"Control_L": 0xffe3, "Return": 0xff0d, "Prior": 0xff55, "Page_Up": 0xff55,
		"F1": 0xffbe, "F35": 0xffe0, "space": 0x20, "plus": 0x2b,
		"a": 0x61, "é": 0xe9, "✓": 0x1002713, "日": 0x10065e5, "\n": 0xff0d, "\t": 0xff09,
	} {
		if got, ok := keysym.Lookup(name); !ok || got != want {
			t.Errorf("Lookup(%q) = %#x, %v; want %#x", name, got, ok, want)
		}
	}
	for _, bad := range []string{"", "frob", "ctrl", "Enter", "F36", "F0", "ab", "\x07", "\xff", "\u0085"} {
		if ks, ok := keysym.Lookup(bad); ok {
			t.Errorf("Lookup(%q) = %#x, want unknown", bad, ks)
		}
	}
}

func TestName(t *testing.T) {
	for ks, want := range map[uint32]string{
		0xff55: "Page_Up", 0xff56: "Page_Down", 0xff9a: "KP_Page_Up", 0xff0d: "Return",
		0xffe3: "Control_L", 0xffbe: "F1", 0x20: "", 0x61: "", 0x1002713: "",
	} {
		if got := keysym.Name(ks); got != want {
			t.Errorf("Name(%#x) = %q, want %q", ks, got, want)
		}
	}
}

// FuzzLookup checks that every name Lookup accepts is a keysym with a
// name or a character, and that a character's keysym types it back.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"a", "Return", "Prior", "KP_0", "F12", "日", "\n", "frob", "", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ks, ok := keysym.Lookup(name)
		if !ok {
			return
		}
		r := keysym.Rune(ks)
		if (r >= 0) == (keysym.Name(ks) != "") {
			t.Fatalf("Lookup(%q) = %#x: rune %q, name %q", name, ks, r, keysym.Name(ks))
		}
		if r >= 0 && utf8.RuneCountInString(name) == 1 {
			if back, _ := keysym.ForRune(r); back != ks {
				t.Fatalf("Lookup(%q) = %#x, but ForRune(%q) = %#x", name, ks, r, back)
			}
		}
	})
}
