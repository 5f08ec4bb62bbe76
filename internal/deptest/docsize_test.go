package deptest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// docLines bounds what `go doc -all` prints for each public package of the
// module: its surface, every exported name with its comment, read in one
// sitting. A package whose surface grows raises its bound here, in the
// commit that says why; a new public package enters with its size.
var docLines = map[string]int{
	"backend/headless":            581,
	"backend/osexec":              150,
	"backend/robotgo":             49,
	"backend/x11":                 228,
	"backend/x11/atspi":           320,
	"backend/x11/atspi/atspitest": 76,
	"backend/x11/session":         253,
	"daemon":                      410,
	"daemon/daemontest":           33,
	"daemon/x11desktop":           53,
	"escouade":                    495,
	"escouade/gate":               87,
	"escouade/gate/gatetest":      101,
	"escouade/guard":              225,
	"escouade/js":                 46,
	"escouade/manifest":           167,
	"escouade/plugin":             127,
	"escouade/plugin/plugintest":  15,
	"escouade/protocol":           398,
	"escouade/schema":             12,
	"escouade/wasm":               60,
	"shinken":                     800,
	"shinken/aci":                 837,
	"shinken/client":              590,
	"shinken/machine":             622,
	"shinken/mcpserver":           325,
	"shinken/metrics":             58,
	"shinken/record":              168,
	"shinken/shinkentest":         260,
	"shinken/toolset":             561,
}

// TestDocSize holds every public package's documentation within its bound
// in docLines; a public package missing from docLines fails it too.
func TestDocSize(t *testing.T) {
	out, err := exec.Command(goCommand(t), "list", "-f", "{{.ImportPath}} {{len .GoFiles}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		pkg, files, _ := strings.Cut(strings.TrimSpace(line), " ")
		rel := strings.TrimPrefix(pkg, module)
		if files == "0" || strings.HasPrefix(rel, "cmd/") || slices.Contains(strings.Split(rel, "/"), "internal") {
			continue // tests alone, commands, and what is no promise
		}
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			doc, err := exec.Command(goCommand(t), "doc", "-all", pkg).Output()
			if err != nil {
				t.Fatalf("go doc: %v", err)
			}
			n := strings.Count(string(doc), "\n")
			max, ok := docLines[rel]
			switch {
			case !ok:
				t.Errorf("go doc -all prints %d lines and docLines has no bound for %s: add it", n, rel)
			case n > max:
				t.Errorf("go doc -all prints %d lines, more than %d", n, max)
			}
		})
	}
}
