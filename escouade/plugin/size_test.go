package plugin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxStripped is what a minimal Go plugin may weigh, stripped.
const maxStripped = 4 << 20

// TestMinimalPluginSize builds the smallest plugin the SDK makes
// (testdata/minimal) as a plugin's author would ship it, stripped, and
// checks its size and that it links none of the Host's engines.
func TestMinimalPluginSize(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build a plugin: %v", err)
	}
	out := filepath.Join(t.TempDir(), "minimal")
	build := exec.Command(gobin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/minimal")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a minimal plugin, stripped: %d bytes", fi.Size())
	if fi.Size() > maxStripped {
		t.Errorf("a minimal plugin weighs %d bytes stripped, more than %d", fi.Size(), maxStripped)
	}

	list := exec.Command(gobin, "list", "-deps", "./testdata/minimal")
	deps, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	engines := []string{"github.com/dop251/goja", "github.com/tetratelabs/wazero", "github.com/godbus/dbus", "go.yaml.in/yaml"}
	for _, dep := range strings.Fields(string(deps)) {
		if dep == "shinken.dev/go/escouade" {
			t.Errorf("a plugin links the Host")
		}
		for _, engine := range engines {
			if strings.HasPrefix(dep, engine) {
				t.Errorf("a plugin links %s", dep)
			}
		}
	}
}
