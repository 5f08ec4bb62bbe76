package escouade_test

import (
	"os/exec"
	"strings"
	"testing"
)

// maxDocLines is what `go doc -all` of the host package may print: the
// embedder's API, read in one sitting. What a plugin may do and what
// holds it is REFERENCE.md's, the manifest package manifest's.
const maxDocLines = 500

// TestDocSize keeps the package's documentation, every exported name with
// its comment, within maxDocLines.
func TestDocSize(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to render the documentation: %v", err)
	}
	out, err := exec.Command(gobin, "doc", "-all", ".").Output()
	if err != nil {
		t.Fatalf("go doc: %v", err)
	}
	if n := strings.Count(string(out), "\n"); n > maxDocLines {
		t.Errorf("go doc -all prints %d lines, more than %d", n, maxDocLines)
	}
}
