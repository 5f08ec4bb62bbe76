package realapps

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

var (
	refPattern = regexp.MustCompile(`\be[1-9][0-9]*\b`)
	revPattern = regexp.MustCompile(` rev [0-9]+\n`)
)

// renumber replaces refs by e1, e2... in order of first appearance, the
// revision by N, and the URLs of the pages in testdata (a document's
// value) by file://testdata/NAME, so that a golden does not depend on how
// many observations came before nor on where the module lies.
func renumber(text string) string {
	text = revPattern.ReplaceAllString(text, " rev N\n")
	if dir, err := filepath.Abs("testdata"); err == nil {
		text = strings.ReplaceAll(text, "file://"+filepath.ToSlash(dir)+"/", "file://testdata/")
	}
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
