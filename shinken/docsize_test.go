package shinken_test

import (
	"testing"

	"shinken.dev/go/internal/deptest"
)

// maxDocLines is what `go doc -all` of this package may print: the public
// surface is to be read in one sitting.
const maxDocLines = 800

// TestDocSize keeps the package's documentation, every exported name with
// its comment, within maxDocLines.
func TestDocSize(t *testing.T) { deptest.DocSize(t, maxDocLines) }
