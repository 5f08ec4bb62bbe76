package headless_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"shinken.dev/go/internal/keysym"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestUnknownKeysRefused checks that the desktop refuses the key names the
// X11 backend refuses, with the same error code, and acts on nothing.
func TestUnknownKeysRefused(t *testing.T) {
	u, a := newEditApp(t)
	u.click("text", "Entry")
	for _, name := range []string{"", "frob", "ctrl", "Enter", "F36", "F0", "ab", "Control-L", "\x07", "\xff", "\u0085"} {
		for _, down := range []bool{true, false} {
			err := u.d.Key(u.ctx, shinken.KeyEvent{Key: name, Down: down})
			if !errors.Is(err, aci.ErrInvalidAction) || aci.WireError(err) != fmt.Sprintf("invalid_action: unknown key %q", name) {
				t.Errorf("Key(%q, down=%v) = %v, want invalid_action: unknown key", name, down, err)
			}
		}
	}
	// The core's "ctrl+frob": Control_L down, frob refused, Control_L up.
	u.keys("Control_L")
	if err := u.d.Key(u.ctx, shinken.KeyEvent{Key: "frob", Down: true}); err == nil {
		t.Fatal("frob was accepted")
	}
	u.typeText("ok")
	if got := a.entry.Text(); got != "ok" {
		t.Fatalf("after the refused keys the entry reads %q, want %q", got, "ok")
	}
}

// TestKeyNames checks that the names X11 takes act as their keys: aliases
// as the key they alias, punctuation names as their character, control
// characters as their function key.
func TestKeyNames(t *testing.T) {
	u, a := newEditApp(t)
	u.click("text", "Entry")
	for _, k := range []string{"plus", "a", "space", "é", "numbersign", "KP_Space"} {
		u.keys(k)
	}
	if got, want := a.entry.Text(), "+a é#"; got != want {
		t.Errorf("entry reads %q, want %q", got, want)
	}
	u.keys("\b") // BackSpace
	if got, want := a.entry.Text(), "+a é"; got != want {
		t.Errorf("after \\b the entry reads %q, want %q", got, want)
	}
	u.keys("\n") // Return: the default button
	if a.clicks != 1 {
		t.Errorf("\\n clicked the default button %d times, want 1", a.clicks)
	}
	// Prior and Next are Page_Up and Page_Down.
	page := func(keys ...string) string {
		u, a := newEditApp(t)
		u.click("text", "Area")
		u.typeText("1\n2\n3\n4\n5\n6\n7\n8\n9")
		for _, k := range keys {
			u.keys(k)
		}
		u.typeText("x")
		return a.area.Text()
	}
	if alias, key := page("Prior", "Prior", "Next"), page("Page_Up", "Page_Up", "Page_Down"); alias != key || alias == page() {
		t.Errorf("Prior, Prior, Next gave %q; Page_Up, Page_Up, Page_Down %q", alias, key)
	}
}

// FuzzKeys presses and releases arbitrary key names on the settings app,
// pop-ups and dialogs included: a name is refused with ErrInvalidAction
// exactly when the X11 vocabulary lacks it, and nothing panics.
func FuzzKeys(f *testing.F) {
	for _, s := range []string{"Tab space", "F10 Down Return", "Alt_L F4", "frob", "Control_L a Control_L c", "\n \t \b", "Escape Escape"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, names string) {
		u := settings(t)
		for _, name := range strings.Split(names, " ") {
			_, known := keysym.Lookup(name)
			for _, down := range []bool{true, false} {
				err := u.d.Key(u.ctx, shinken.KeyEvent{Key: name, Down: down})
				if known && err != nil || !known && !errors.Is(err, aci.ErrInvalidAction) {
					t.Fatalf("Key(%q, down=%v) = %v; known: %v", name, down, err, known)
				}
			}
		}
		u.tree()
		u.screen()
	})
}
