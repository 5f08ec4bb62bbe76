package shinken_test

import (
	"strings"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/shinkentest"
)

// TestExecWithoutExecutorNamesTheFix: a runtime served with no executor
// refuses exec with an error that names the option to set.
func TestExecWithoutExecutorNamesTheFix(t *testing.T) {
	c := shinkentest.Serve(t, headless.New(nil), nil)
	_, err := c.Exec(t.Context(), &aci.ExecRequest{Argv: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "RuntimeOptions.Executor") {
		t.Errorf("exec without an executor: %v, want an error naming RuntimeOptions.Executor", err)
	}
}
