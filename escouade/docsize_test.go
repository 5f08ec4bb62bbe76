package escouade_test

import (
	"testing"

	"shinken.dev/go/internal/deptest"
)

// maxDocLines is what `go doc -all` of the host package may print: the
// embedder's API, read in one sitting. What a plugin may do and what
// holds it is REFERENCE.md's, the manifest package manifest's.
const maxDocLines = 495

// TestDocSize keeps the package's documentation, every exported name with
// its comment, within maxDocLines.
func TestDocSize(t *testing.T) { deptest.DocSize(t, maxDocLines) }
