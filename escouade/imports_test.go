package escouade

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the plugin host apart from the runtime it serves, and
// test machinery out of production code: no package here imports shinken,
// and none imports testing outside its tests.
func TestImports(t *testing.T) {
	forbidden := []string{"shinken.dev/go/shinken", "testing"}
	for _, dir := range []string{".", "plugin", "protocol", "schema", "manifest", "guard", "internal/fields", "internal/fence", "internal/jsonrpc", "../internal/strictjson", "internal/ssrf"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbidden {
					if path == bad || strings.HasPrefix(path, bad+"/") {
						t.Errorf("%s imports %s", f, path)
					}
				}
			}
		}
	}
}

// TestProtocolImports keeps the protocol package, which every plugin
// links, and the SDK to the standard library, x/sys, the JSON-RPC codec
// and the strict JSON decoder it reads with.
func TestProtocolImports(t *testing.T) {
	allowed := map[string]bool{
		"shinken.dev/go/escouade/internal/fields":  true,
		"shinken.dev/go/escouade/schema":           true,
		"shinken.dev/go/escouade/protocol":         true,
		"shinken.dev/go/escouade/internal/jsonrpc": true,
		"shinken.dev/go/internal/strictjson":       true,
		"golang.org/x/sys/unix":                    true,
	}
	for _, dir := range []string{"protocol", "schema", "internal/fields", "plugin"} {
		onlyImports(t, dir, allowed)
	}
}

// TestFenceImports keeps the ladder: the fences stand beneath the Host and
// reach only the protocol, the manifest's rules, the codecs, the network's
// judge and the rooms beneath them, never the host package that hands them
// what it knows.
func TestFenceImports(t *testing.T) {
	onlyImports(t, "internal/fence", map[string]bool{
		"shinken.dev/go/escouade/protocol":         true,
		"shinken.dev/go/escouade/manifest":         true,
		"shinken.dev/go/escouade/internal/fields":  true,
		"shinken.dev/go/escouade/internal/beneath": true,
		"shinken.dev/go/escouade/internal/contain": true,
		"shinken.dev/go/escouade/internal/jsonrpc": true,
		"shinken.dev/go/internal/logtext":          true,
		"shinken.dev/go/internal/strictjson":       true,
		"shinken.dev/go/escouade/internal/ssrf":    true,
		"github.com/coder/websocket":               true,
	})
}

// TestManifestImports: the manifest package, which a program that only
// reads plugin folders links, stands beneath the fences and reaches only
// the protocol, the one strict decoder and the folder's opener.
func TestManifestImports(t *testing.T) {
	onlyImports(t, "manifest", map[string]bool{
		"shinken.dev/go/escouade/protocol":         true,
		"shinken.dev/go/escouade/internal/fields":  true,
		"shinken.dev/go/escouade/internal/beneath": true,
		"shinken.dev/go/internal/strictjson":       true,
	})
}

// onlyImports checks that the non-test files of dir import, beyond the
// standard library, only the packages allowed.
func onlyImports(t *testing.T, dir string, allowed map[string]bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !allowed[path] {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
