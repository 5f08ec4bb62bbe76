package x11

import (
	"errors"
	"testing"

	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/shinken/aci"
)

func TestKeysymForName(t *testing.T) {
	for name, want := range map[string]xproto.Keysym{
		"Control_L": 0xffe3, "Shift_L": 0xffe1, "Alt_L": 0xffe9, "Super_L": 0xffeb,
		"Return": 0xff0d, "Tab": 0xff09, "Escape": 0xff1b, "BackSpace": 0xff08, "Delete": 0xffff,
		"Home": 0xff50, "End": 0xff57, "Page_Up": 0xff55, "Page_Down": 0xff56,
		"Left": 0xff51, "Up": 0xff52, "Right": 0xff53, "Down": 0xff54,
		"F1": 0xffbe, "F12": 0xffc9, "space": 0x20, "minus": 0x2d,
		"a": 0x61, "A": 0x41, "1": 0x31, "é": 0xe9, "ß": 0xdf, "✓": 0x1002713, "日": 0x10065e5, "€": 0x10020ac,
	} {
		got, err := keysymForName(name)
		if err != nil || got != want {
			t.Errorf("keysymForName(%q) = %#x, %v; want %#x", name, got, err, want)
		}
	}
	for _, bad := range []string{"", "ab", "NoSuchKey", "\x07", "\xff"} {
		if _, err := keysymForName(bad); !errors.Is(err, aci.ErrInvalidAction) {
			t.Errorf("keysymForName(%q): %v", bad, err)
		}
	}
}

func TestKeysymRunes(t *testing.T) {
	for _, r := range []rune{'a', 'Z', ' ', '~', 'é', 'ÿ', '✓', '日', '😀'} {
		ks, ok := runeKeysym(r)
		if !ok || keysymRune(ks) != r {
			t.Errorf("%q: keysym %#x, back %q", r, ks, keysymRune(ks))
		}
	}
	if ks, _ := runeKeysym('\n'); ks != 0xff0d || keysymRune(ks) != -1 {
		t.Errorf("newline: %#x", ks)
	}
	for _, c := range []struct{ in, lo, up xproto.Keysym }{
		{'a', 'a', 'A'}, {'A', 'a', 'A'}, {'1', '1', '1'}, {0xe9, 0xe9, 0xc9}, {0xdf, 0xdf, 0xdf},
		{0x10003c9, 0x10003c9, 0x10003a9}, {0xff0d, 0xff0d, 0xff0d},
	} {
		if lo, up := caseKeysyms(c.in); lo != c.lo || up != c.up {
			t.Errorf("caseKeysyms(%#x) = %#x %#x, want %#x %#x", c.in, lo, up, c.lo, c.up)
		}
	}
}
