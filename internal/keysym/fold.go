package keysym

import (
	"strconv"
	"strings"
)

// folded maps the lower-case spelling of every key name of the table to
// its own spelling.
var folded = func() map[string]string {
	m := make(map[string]string, len(named)+35)
	for i := 1; i <= 35; i++ {
		n := "F" + strconv.Itoa(i)
		m[strings.ToLower(n)] = n
	}
	for name := range named {
		m[strings.ToLower(name)] = name
	}
	return m
}()

// Fold returns the table's spelling of a multi-character key name given in
// any case ("kp_enter" and "KP_ENTER" are "KP_Enter", "page_down" is
// "Page_Down"), for callers whose vendors call key names case-insensitive.
// Single characters are not folded: their case is the character.
func Fold(name string) (string, bool) {
	if len(name) < 2 {
		return "", false
	}
	n, ok := folded[strings.ToLower(name)]
	return n, ok
}
