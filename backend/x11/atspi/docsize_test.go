package atspi_test

import (
	"testing"

	"shinken.dev/go/internal/deptest"
)

// maxDocLines is what `go doc -all` of this package may print: a fact
// added to its documentation replaces words rather than growing it.
const maxDocLines = 325

// TestDocSize keeps the package's documentation, every exported name with
// its comment, within maxDocLines.
func TestDocSize(t *testing.T) { deptest.DocSize(t, maxDocLines) }
