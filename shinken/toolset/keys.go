package toolset

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"shinken.dev/go/internal/keysym"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// xdotoolKeys normalises a key text in xdotool's syntax, as Anthropic's
// models write it, to an ACI key expression: combinations joined by '+',
// several separated by spaces. Names are case-insensitive ("CTRL+S",
// "ctrl+A", "return", "ESCAPE", "page_down", "kp_enter"), as Anthropic's
// SDK says; a letter in a combination names its key and never adds Shift
// (ctrl+S is ctrl+s, as a person pressing it means it: a shifted shortcut
// says shift); a character alone is typed as itself. An unknown name is
// refused rather than passed on.
func xdotoolKeys(text string) (string, error) {
	combos := strings.Fields(text)
	if len(combos) == 0 {
		return "", errors.New("toolset: no key in the text")
	}
	out := make([]string, 0, len(combos))
	for _, combo := range combos {
		parts := strings.Split(combo, "+")
		switch {
		case combo == "+":
			parts = []string{"+"}
		case strings.HasSuffix(combo, "++"):
			parts = append(strings.Split(strings.TrimSuffix(combo, "++"), "+"), "+")
		}
		names := make([]string, 0, len(parts))
		for _, p := range parts {
			if p == "" {
				return "", fmt.Errorf("toolset: empty key name in %q", combo)
			}
			n, err := keyName(p, len(parts) > 1)
			if err != nil {
				return "", err
			}
			names = append(names, n)
		}
		out = append(out, strings.Join(names, "+"))
	}
	return strings.Join(out, " "), nil
}

// keyName is the ACI name of one key as a vendor writes it, its case
// ignored; a letter in a combination (inCombo) is its lower-case key.
func keyName(p string, inCombo bool) (string, error) {
	switch {
	case p == "+":
		return "plus", nil
	case utf8.RuneCountInString(p) == 1:
		if inCombo {
			p = string(unicode.ToLower([]rune(p)[0]))
		}
		return shinken.KeyName(p)
	}
	if n, ok := keysym.Fold(p); ok {
		return n, nil
	}
	n, err := shinken.KeyName(p) // the agents' aliases: ctrl, cmd, pgdn, enter...
	if err != nil {
		return "", err
	}
	if n == p {
		return "", aci.Errorf(aci.CodeInvalidAction, "unknown key %q", p)
	}
	return n, nil
}
