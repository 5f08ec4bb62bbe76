// Package citest holds a test to what CI promises: where the environment
// variable CI is "true", everything the tests need is installed and
// allowed (scripts/test sets it up), so what would skip a test elsewhere
// fails it there, and a CI machine that lost a package or a right cannot
// pass by skipping.
package citest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// On reports whether the tests run under CI.
func On() bool { return os.Getenv("CI") == "true" }

// Skip skips t, saying why, or, under CI, fails it.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if On() {
		t.Fatalf("%s (CI=true: this test must run)", why)
	}
	t.Skipf("%s", why)
}

// NeedPrograms skips t, or under CI fails it, unless every one of
// programs is on PATH.
func NeedPrograms(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			Skip(t, "%s is not installed", p)
		}
	}
}
