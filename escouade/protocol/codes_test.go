package protocol

import "testing"

// TestCodesAreTheSchemas: each code the package names is the one the
// schema's x-errors gives its name, and the schema has no other.
func TestCodesAreTheSchemas(t *testing.T) {
	for code, name := range codeNames {
		if got, ok := codeOf(name); !ok || got != code {
			t.Errorf("%s: the schema says %d (%v), the package %d", name, got, ok, code)
		}
	}
	if n := len(spec().codes); n != len(codeNames) {
		t.Errorf("the schema names %d codes, the package %d", n, len(codeNames))
	}
	if _, ok := codeOf("nope"); ok {
		t.Error("a name the schema does not have")
	}
}
