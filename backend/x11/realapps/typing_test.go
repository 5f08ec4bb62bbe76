package realapps

import (
	"fmt"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// roundText returns round i's text: characters no keyboard layout has,
// new in every round, so that each needs a keycode remapped for it: the
// three texts Chromium once typed without their first character, then
// three CJK ideographs, two Greek letters and a symbol twice.
func roundText(i int) string {
	if first := []string{"日本語テキスト", "Ελληνικά", "✓✓"}; i < len(first) {
		return first[i]
	}
	cjk := rune(0x4e00 + 3*i)
	greek := rune(0x3b1 + i%24)
	sym := rune(0x2600 + i)
	return fmt.Sprintf("%c%c%c %c%c %c%c", cjk, cjk+1, cjk+2, greek, greek+0x1000, sym, sym)
}

// TestChromiumTypesEveryCharacter types text that needs temporary key
// mappings into a Chromium field, rounds times: the first look after each
// type_text reads every character, the first one included.
func TestChromiumTypesEveryCharacter(t *testing.T) {
	d := newDesk(t)
	d.chromium("form.html")
	obs := d.observe("the form", formReady)
	name := ref(obs, "entry", "Name")
	for i := range rounds {
		ctx := ctxT(t)
		if err := d.c.Click(ctx, aci.Ref(name)); err != nil {
			t.Fatal(err)
		}
		if err := d.c.Key(ctx, "ctrl+a"); err != nil {
			t.Fatal(err)
		}
		text := roundText(i)
		if err := d.c.TypeText(ctx, text); err != nil {
			t.Fatalf("round %d: type %q: %v", i, text, err)
		}
		if e := element(d.look(), name); e == nil || e.Value != text {
			t.Fatalf("round %d: typed %q, the field reads %+v", i, text, e)
		}
	}
}

// TestChromiumShortcutAfterNewCharacters sends a shortcut right after
// typing characters that needed keycodes remapped, rounds times: Chromium
// reloads its keyboard layout after a mapping change, and a ctrl+a that
// came while it did would be lost, the next text appended to the last
// instead of replacing it.
func TestChromiumShortcutAfterNewCharacters(t *testing.T) {
	d := newDesk(t)
	d.chromium("form.html")
	obs := d.observe("the form", formReady)
	name := ref(obs, "entry", "Name")
	ctx := ctxT(t)
	if err := d.c.Click(ctx, aci.Ref(name)); err != nil {
		t.Fatal(err)
	}
	for i := range rounds {
		ctx := ctxT(t)
		text, plain := roundText(rounds+i), fmt.Sprintf("plain %d", i)
		for _, step := range []func() error{
			func() error { return d.c.Key(ctx, "ctrl+a") },
			func() error { return d.c.TypeText(ctx, text) },
			func() error { return d.c.Key(ctx, "ctrl+a") },
			func() error { return d.c.TypeText(ctx, plain) },
		} {
			if err := step(); err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
		if e := element(d.look(), name); e == nil || e.Value != plain {
			t.Fatalf("round %d: typed %q, ctrl+a, then %q: the field reads %+v", i, text, plain, e)
		}
	}
}
