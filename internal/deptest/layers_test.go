package deptest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// The module's floors, from the bottom up: a package imports only from its
// own floor or the ones beneath it. The runtime (shinken) knows no backend
// and no plugin host; the backends and the plugin host know the runtime and
// never each other; the daemon composes them all; commands sit on top.
var floors = []struct {
	name     string
	prefixes []string
}{
	{"internal", []string{"internal"}},
	{"runtime", []string{"shinken"}},
	{"parts", []string{"backend", "escouade"}},
	{"composition root", []string{"daemon"}},
	{"commands", []string{"cmd"}},
}

// testRigs are the two internal test rigs that reach up on purpose, each
// saying why in its package doc: xvfb runs a real X session through the x11
// backend's session package, and schematest checks messages against the
// wire's own types.
var testRigs = map[string]bool{
	"internal/xvfb":          true,
	"internal/xvfb/xvfbtest": true,
	"internal/schematest":    true,
}

const module = "shinken.dev/go/"

func floorOf(pkg string) (int, string) {
	for i, f := range floors {
		for _, p := range f.prefixes {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return i, p
			}
		}
	}
	return -1, ""
}

// TestLayers holds the house's arrows one way: no package of the module
// imports (outside its tests) a package on a higher floor, and the parts on
// one floor (backends, the plugin host) do not import each other.
func TestLayers(t *testing.T) {
	cmd := exec.Command(goCommand(t), "list", "-json=ImportPath,Imports", module+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		pkg := strings.TrimPrefix(p.ImportPath, module)
		from, fromTree := floorOf(pkg)
		if from < 0 {
			t.Errorf("%s stands on no floor: add it to the floors", pkg)
			continue
		}
		if testRigs[pkg] {
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			to, toTree := floorOf(dep)
			switch {
			case to > from:
				t.Errorf("%s (%s) imports %s (%s): an arrow up", pkg, floors[from].name, dep, floors[to].name)
			case to == from && fromTree != toTree:
				t.Errorf("%s imports %s: the parts on one floor know nothing of each other", pkg, dep)
			}
		}
	}
	if seen < 20 {
		t.Fatalf("go list gave %d packages: the module was not found", seen)
	}
}
