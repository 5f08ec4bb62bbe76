package xvfbtest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder stands in for a test to see whether Start skips or fails. Like
// testing.T, it ends the calling goroutine on Skip and Fatal.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()        {}
func (r *recorder) Cleanup(func()) {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

func start(t *testing.T) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(r, nil)
	}()
	<-done
	return r
}

// TestMissingXvfb checks that without Xvfb a test is skipped, naming the
// program, except under CI=true where it fails.
func TestMissingXvfb(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	if r := start(t); !strings.Contains(r.skipped, "Xvfb") || r.failed != "" {
		t.Fatalf("without CI: skipped %q, failed %q", r.skipped, r.failed)
	}
	t.Setenv("CI", "true")
	if r := start(t); !strings.Contains(r.failed, "Xvfb") || r.skipped != "" {
		t.Fatalf("with CI=true: skipped %q, failed %q", r.skipped, r.failed)
	}
}
