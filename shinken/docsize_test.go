package shinken_test

import (
	"os/exec"
	"strings"
	"testing"
)

// maxDocLines is what `go doc -all` of this package may print: the public
// surface is to be read in one sitting.
const maxDocLines = 800

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
