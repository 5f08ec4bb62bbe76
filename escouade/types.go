package escouade

import "shinken.dev/go/escouade/protocol"

// The protocol's messages are the types of package protocol, which a Go
// plugin (package plugin) decodes without linking the Host; they are named
// here too so that the Host's callers need only this package.
type (
	// A Project is a project, by its id and its name.
	Project = protocol.Project
	// A Ticket is a ticket, by its id, its key (like ESC-12) and its title.
	Ticket = protocol.Ticket
	// An Agent is an agent, by its id and its name.
	Agent = protocol.Agent
	// A Fact is what changed, and the project, ticket and agent it is about.
	Fact = protocol.Fact
	// A PermissionRequest is what an agent asks to do.
	PermissionRequest = protocol.PermissionRequest
	// DecideParams are the params of permissions/decide.
	DecideParams = protocol.DecideParams
	// A Verdict is what a decision says.
	Verdict = protocol.Verdict
	// A Decision answers a permission request.
	Decision = protocol.Decision
	// Capabilities is what the Host can do for a plugin.
	Capabilities = protocol.Capabilities
	// InitializeParams are the params of initialize, the first message.
	InitializeParams = protocol.InitializeParams
	// HostInfo names the Host's version in initialize.
	HostInfo = protocol.HostInfo
	// PluginInfo is the plugin as its manifest says, in initialize.
	PluginInfo = protocol.PluginInfo
	// InitializeResult is a plugin's answer to initialize.
	InitializeResult = protocol.InitializeResult
	// AttachParams are the params of agent/attach.
	AttachParams = protocol.AttachParams
)

// Verdicts. A refusal wins over an allowance; ask leaves it to the user.
const (
	Allow = protocol.Allow
	Deny  = protocol.Deny
	Ask   = protocol.Ask
)
