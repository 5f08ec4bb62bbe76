package shinkentest_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestAgentLinksNoSuite lists what an agent's test links when it imports
// shinkentest for Serve and the headless backend (testdata/agent): none of
// what only the conformance suite's own runs need, the JSON Schema
// validator and the message formatting it brings.
func TestAgentLinksNoSuite(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list a test's dependencies: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-test", "-deps", "./testdata/agent").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "shinken.dev/go/shinken/shinkentest") || !slices.Contains(deps, "shinken.dev/go/backend/headless") {
		t.Fatalf("the agent's test does not link shinkentest and headless: %v", deps)
	}
	for _, dep := range deps {
		for _, banned := range []string{"github.com/santhosh-tekuri/jsonschema", "golang.org/x/text/message", "shinken.dev/go/internal/schematest"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("an agent's test links %s", dep)
			}
		}
	}
}
