package escouade_test

import (
	"slices"
	"testing"

	"shinken.dev/go/internal/deptest"
)

// commandHostMax is what the smallest program embedding the Host for
// command plugins may weigh, stripped: half of the 19,030,178 bytes it
// weighed when every Host linked both engines.
const commandHostMax = 19_030_178 / 2

// TestCommandHostDeps: a program that embeds the Host and starts command
// plugins alone (testdata/cmdhost) links no script or WebAssembly engine,
// and weighs at most half of what it did when it did; the engines come
// only with their packages.
func TestCommandHostDeps(t *testing.T) {
	deptest.Forbid(t, "./testdata/cmdhost",
		"github.com/dop251/goja", "github.com/tetratelabs/wazero", "github.com/dlclark/regexp2/v2",
		"github.com/go-sourcemap/sourcemap", "github.com/google/pprof")
	size := deptest.StrippedSize(t, "./testdata/cmdhost")
	t.Logf("a command-plugin host, stripped: %d bytes", size)
	if size > commandHostMax {
		t.Errorf("a command-plugin host weighs %d bytes stripped, more than %d", size, commandHostMax)
	}
	for pkg, engine := range map[string]string{"./js": "github.com/dop251/goja", "./wasm": "github.com/tetratelabs/wazero"} {
		if !slices.Contains(deptest.Deps(t, pkg), engine) {
			t.Errorf("%s does not link %s: the engine is not where this test looks", pkg, engine)
		}
	}
}
