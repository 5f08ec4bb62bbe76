package machine_test

import (
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/machine"
)

// agent is a session with its machine's tools, so that a test calls the
// ACI verbs and the tools on one value.
type agent struct {
	*client.Client
	*machine.Tools
}

func tools(c *client.Client) *agent { return &agent{c, machine.New(c, nil)} }
