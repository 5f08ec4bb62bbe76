//go:build !robotgo

package robotgo

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDefaultBuildIsPureGo checks that only the robotgo build tag brings
// cgo into the module: without it no package of the module, and none they
// import outside the standard library, has cgo files; the example does not
// import robotgo; and the module builds with CGO_ENABLED=0.
func TestDefaultBuildIsPureGo(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	root := strings.TrimSpace(run(t, gotool, nil, "list", "-m", "-f", "{{.Dir}}"))
	inRoot := func(env []string, args ...string) string {
		t.Helper()
		return run(t, gotool, env, append([]string{"-C", root}, args...)...)
	}
	if cgo := strings.Fields(inRoot(nil, "list", "-deps", "-f", "{{if and (not .Standard) .CgoFiles}}{{.ImportPath}}{{end}}", "./...")); len(cgo) > 0 {
		t.Errorf("the default build uses cgo in %v", cgo)
	}
	const robotgo = "github.com/go-vgo/robotgo"
	if deps := inRoot(nil, "list", "-deps", "./cmd/example"); strings.Contains(deps, robotgo) {
		t.Errorf("cmd/example imports %s without the robotgo tag", robotgo)
	}
	// The check above means something only if the tag does bring it in.
	if deps := inRoot(nil, "list", "-deps", "-tags", "robotgo", "./cmd/example"); !strings.Contains(deps, robotgo) {
		t.Errorf("cmd/example does not import %s with the robotgo tag", robotgo)
	}
	inRoot([]string{"CGO_ENABLED=0"}, "build", "./...")
}

// run runs the go command and returns its standard output, failing t with
// its standard error when it fails.
func run(t *testing.T, gotool string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gotool, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
