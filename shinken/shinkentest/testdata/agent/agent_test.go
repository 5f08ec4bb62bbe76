// Package agent is an agent's test as an adopter writes one: it imports
// shinkentest and the headless backend, and nothing of the conformance
// suite's. TestAgentLinksNoSuite lists what its test binary links.
package agent

import (
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/shinkentest"
)

func TestAgent(t *testing.T) {
	desk := headless.New(nil)
	if err := desk.Launch(t.Context(), "form", nil); err != nil {
		t.Fatal(err)
	}
	c := shinkentest.Serve(t, desk, nil)
	obs, err := c.Observe(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	name, err := obs.Find("text", "Name")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetValue(t.Context(), aci.Ref(name.Ref), "Ada"); err != nil {
		t.Fatal(err)
	}
}
