package realapps

import (
	"regexp"
	"strconv"
)

var (
	refPattern = regexp.MustCompile(`\be[1-9][0-9]*\b`)
	revPattern = regexp.MustCompile(` rev [0-9]+\n`)
)

// renumber replaces refs by e1, e2... in order of first appearance, and
// the revision by N, so that a golden does not depend on how many
// observations came before.
func renumber(text string) string {
	text = revPattern.ReplaceAllString(text, " rev N\n")
	seen := map[string]string{}
	return refPattern.ReplaceAllStringFunc(text, func(r string) string {
		if n, ok := seen[r]; ok {
			return n
		}
		n := "e" + strconv.Itoa(len(seen)+1)
		seen[r] = n
		return n
	})
}
