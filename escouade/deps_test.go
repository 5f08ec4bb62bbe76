package escouade_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// commandHostMax is what the smallest program embedding the Host for
// command plugins may weigh, stripped: half of the 19,030,178 bytes it
// weighed when every Host linked both engines.
const commandHostMax = 19_030_178 / 2

// engineDeps are the packages only the engines of run.js and run.wasm need.
var engineDeps = []string{
	"github.com/dop251/goja", "github.com/tetratelabs/wazero", "github.com/dlclark/regexp2",
	"github.com/go-sourcemap/sourcemap", "github.com/google/pprof",
}

// TestCommandHostDeps, in the style of tailscale's deptest: a program that
// embeds the Host and starts command plugins alone (testdata/cmdhost)
// links no script or WebAssembly engine, and weighs at most half of what
// it did when it did; the engines come only with their packages.
func TestCommandHostDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	list := exec.Command(gobin, "list", "-deps", "./testdata/cmdhost")
	deps, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(deps)) {
		for _, bad := range engineDeps {
			if strings.HasPrefix(dep, bad) {
				t.Errorf("a command-plugin host links %s", dep)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "cmdhost")
	build := exec.Command(gobin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/cmdhost")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a command-plugin host, stripped: %d bytes", fi.Size())
	if fi.Size() > commandHostMax {
		t.Errorf("a command-plugin host weighs %d bytes stripped, more than %d", fi.Size(), commandHostMax)
	}
	for pkg, want := range map[string]string{"./js": "github.com/dop251/goja", "./wasm": "github.com/tetratelabs/wazero"} {
		deps, err := exec.Command(gobin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		if !strings.Contains(string(deps), want) {
			t.Errorf("%s does not link %s: the engine is not where this test looks", pkg, want)
		}
	}
}
