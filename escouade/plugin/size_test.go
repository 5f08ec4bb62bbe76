package plugin_test

import (
	"slices"
	"testing"

	"shinken.dev/go/internal/deptest"
)

// maxStripped is what a minimal Go plugin may weigh, stripped.
const maxStripped = 4 << 20

// TestMinimalPluginSize builds the smallest plugin the SDK makes
// (testdata/minimal) as a plugin's author would ship it, stripped, and
// checks its size and that it links none of the Host's engines.
func TestMinimalPluginSize(t *testing.T) {
	size := deptest.StrippedSize(t, "./testdata/minimal")
	t.Logf("a minimal plugin, stripped: %d bytes", size)
	if size > maxStripped {
		t.Errorf("a minimal plugin weighs %d bytes stripped, more than %d", size, maxStripped)
	}
	if slices.Contains(deptest.Deps(t, "./testdata/minimal"), "shinken.dev/go/escouade") {
		t.Errorf("a plugin links the Host")
	}
	deptest.Forbid(t, "./testdata/minimal", "github.com/dop251/goja", "github.com/tetratelabs/wazero", "github.com/godbus/dbus", "go.yaml.in/yaml")
}
