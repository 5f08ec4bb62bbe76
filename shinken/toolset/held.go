package toolset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"shinken.dev/go/shinken/aci"
)

// Held modifiers across calls. ACI v0 holds keys only for one action's
// duration (a key action's ms, a gesture's keys), and a key held by a key
// action holds the runtime's input with it; so a modifier "held" from one
// call to the next (Gemini's key_down, the MCP server's key_down) is held
// the way a hand holds it for what it does meanwhile: every click, scroll,
// drag, move and key made under it is made with it down. Nothing stays
// down on the desktop between calls, so nothing is left held when a
// session ends. Typing text under a held modifier is refused (it would
// type shortcuts), and keys other than modifiers cannot be held so.

type heldKeysKey struct{}

// WithHeldKeys returns a context under which the calls of every toolset
// are made with the modifiers keys held (ACI names, from [Modifier]): each
// click, scroll, drag, move and key action carries them, and type is
// refused. No keys returns ctx as it is.
func WithHeldKeys(ctx context.Context, keys ...string) context.Context {
	if len(keys) == 0 {
		return ctx
	}
	return context.WithValue(ctx, heldKeysKey{}, strings.Join(keys, "+"))
}

func heldKeys(ctx context.Context) string {
	s, _ := ctx.Value(heldKeysKey{}).(string)
	return s
}

// Modifier returns the ACI name of a modifier key given as a vendor writes
// it, in any case ("shift", "CTRL", "Control_L", "alt", "super", "cmd"),
// or an error for any other key: only modifiers can be held across calls.
func Modifier(name string) (string, error) {
	k, err := keyName(strings.TrimSpace(name), false)
	if err != nil {
		return "", err
	}
	if !slices.Contains(modifierKeys, k) {
		return "", fmt.Errorf("toolset: only modifiers (shift, ctrl, alt, meta, super) can be held across calls, not %q: press other keys with a key action", name)
	}
	return k, nil
}

// withHeld applies the held keys of ctx to act; held is non-empty.
func (s *screen) withHeld(held string, act *aci.Action) (*aci.Action, error) {
	a := *act
	join := func(keys string) string {
		if keys == "" {
			return held
		}
		return held + "+" + keys
	}
	switch a.Verb {
	case aci.VerbClick, aci.VerbDoubleClick, aci.VerbRightClick, aci.VerbScroll, aci.VerbDrag:
		a.Keys = join(a.Keys)
	case aci.VerbMouseDown:
		a.Keys = join(a.Keys)
	case aci.VerbMove:
		if s.buttonsDown() > 0 {
			// The mouse_down holds the keys until its mouse_up.
			return &a, nil
		}
		a.Keys = join(a.Keys)
	case aci.VerbKey:
		combos := strings.Fields(a.Keys)
		for i, c := range combos {
			combos[i] = held + "+" + c
		}
		a.Keys = strings.Join(combos, " ")
	case aci.VerbTypeText:
		return nil, fmt.Errorf("toolset: typing text while %s is held would type shortcuts: release it first", held)
	}
	return &a, nil
}
