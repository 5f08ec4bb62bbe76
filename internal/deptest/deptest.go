// Package deptest checks, from a test, what a program links and what it
// weighs, as tailscale's deptest does: a test names a package, and fails
// when a dependency it forbids creeps in, or when the program, built as a
// user ships it, passes a size. Its own tests hold the module's layers
// (TestLayers) and every public package's documentation within its bound
// (TestDocSize).
package deptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goCommand returns the go command, which these checks need.
func goCommand(t testing.TB) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list and build a program: %v", err)
	}
	return gobin
}

// Deps returns the packages pkg links, itself included (go list -deps).
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	out, err := exec.Command(goCommand(t), "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// Forbid fails t for each package pkg links that is one of bad, or below
// one of them.
func Forbid(t testing.TB, pkg string, bad ...string) {
	t.Helper()
	for _, dep := range Deps(t, pkg) {
		for _, b := range bad {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}

// StrippedSize builds the program pkg as a user ships it (no cgo,
// -trimpath, symbols and DWARF stripped) and returns its size in bytes.
func StrippedSize(t testing.TB, pkg string) int64 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "program")
	build := exec.Command(goCommand(t), "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
