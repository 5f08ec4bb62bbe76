package x11

import (
	"fmt"
	"unicode"

	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/internal/keysym"
	"shinken.dev/go/shinken/aci"
)

// keysymForName maps a KeyEvent's key, a keysym name or a single
// character, to its keysym. The names are the project's one vocabulary
// (internal/keysym), which the headless desktop accepts and refuses alike.
func keysymForName(name string) (xproto.Keysym, error) {
	if ks, ok := keysym.Lookup(name); ok {
		return xproto.Keysym(ks), nil
	}
	return 0, fmt.Errorf("%w: unknown key %q", aci.ErrInvalidAction, name)
}

// runeKeysym maps a character to the keysym that types it (keysym.ForRune).
func runeKeysym(r rune) (xproto.Keysym, bool) {
	ks, ok := keysym.ForRune(r)
	return xproto.Keysym(ks), ok
}

// keysymRune is runeKeysym's inverse for character keysyms, -1 otherwise.
func keysymRune(ks xproto.Keysym) rune { return keysym.Rune(uint32(ks)) }

// caseKeysyms returns the lower and upper case forms of a character keysym,
// the way X fills a keycode's second level when it is left empty.
func caseKeysyms(ks xproto.Keysym) (lower, upper xproto.Keysym) {
	r := keysymRune(ks)
	if r < 0 {
		return ks, ks
	}
	lo, _ := runeKeysym(unicode.ToLower(r))
	up, _ := runeKeysym(unicode.ToUpper(r))
	if r == 'ÿ' || r == 'µ' || r == 'ß' { // their capitals lie outside Latin-1
		return ks, ks
	}
	return lo, up
}
