package protocol

import (
	"encoding/json"
	"time"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/internal/strictjson"
)

// The types in this file are the protocol's messages, as both sides see
// them: the Host encodes them, a Go plugin (package plugin) decodes them.
// Their UnmarshalJSON methods are strict (package fields): they decode by
// the fields' names and tags (wire:"required" for a field that must be
// present), keys match only as written, a field given twice is an error,
// a field the type does not name is ignored (the protocol's messages may
// grow fields), and every error names the field's path.

// A Project is a project, by its id and its name.
type Project struct {
	ID   string `json:"id" wire:"required"`
	Name string `json:"name" wire:"required"`
	// Private: a plugin not turned on for it gets nothing of it.
	Private bool `json:"private" wire:"required"`
}

// A Ticket is a ticket, by its id, its key (like ESC-12) and its title.
type Ticket struct {
	ID    string `json:"id" wire:"required"`
	Key   string `json:"key" wire:"required"`
	Title string `json:"title" wire:"required"`
}

// An Agent is an agent, by its id and its name.
type Agent struct {
	ID   string `json:"id" wire:"required"`
	Name string `json:"name" wire:"required"`
}

// A Fact is what changed, and the project, ticket and agent it is about.
type Fact struct {
	Name    string `json:"name" wire:"required"`    // one of the protocol's fact names
	Version int    `json:"version" wire:"required"` // the version of this fact's fields
	// Seq numbers the facts, in order, since the Host started.
	Seq     int64    `json:"seq" wire:"required"`
	At      string   `json:"at" wire:"required"` // when, in RFC 3339 (see Time)
	Project *Project `json:"project,omitempty"`
	Ticket  *Ticket  `json:"ticket,omitempty"`
	Agent   *Agent   `json:"agent,omitempty"`
	// Data is the fact's JSON object, left raw: decode what you read.
	Data json.RawMessage `json:"data" wire:"required"`
}

// Time parses At.
func (f *Fact) Time() (time.Time, error) { return time.Parse(time.RFC3339Nano, f.At) }

// UnmarshalJSON decodes a fact.
func (f *Fact) UnmarshalJSON(b []byte) error {
	*f = Fact{}
	if err := fields.Decode(b, f); err != nil {
		return err
	}
	if strictjson.KindOf(f.Data) != strictjson.KindObject {
		return &FieldError{Path: "data", Err: fields.ErrWantObject}
	}
	return nil
}

// UnmarshalJSON decodes a project.
func (pr *Project) UnmarshalJSON(b []byte) error {
	*pr = Project{}
	return fields.Decode(b, pr)
}

// UnmarshalJSON decodes a ticket.
func (t *Ticket) UnmarshalJSON(b []byte) error {
	*t = Ticket{}
	return fields.Decode(b, t)
}

// UnmarshalJSON decodes an agent.
func (a *Agent) UnmarshalJSON(b []byte) error {
	*a = Agent{}
	return fields.Decode(b, a)
}

// A PermissionRequest is what an agent asks to do.
type PermissionRequest struct {
	ID   string `json:"id" wire:"required"`
	Kind string `json:"kind" wire:"required"` // like command, edit, fetch
	Tool string `json:"tool,omitempty"`       // the harness's tool, like Bash
	// Input is what the tool was given, like {"command": "npm test"}.
	Input map[string]any `json:"input,omitempty"`
}

// UnmarshalJSON decodes a permission request.
func (r *PermissionRequest) UnmarshalJSON(b []byte) error {
	*r = PermissionRequest{}
	return fields.Decode(b, r)
}

// DecideParams are permissions/decide's: a request and where it comes from.
type DecideParams struct {
	Request PermissionRequest `json:"request" wire:"required"`
	Project Project           `json:"project" wire:"required"`
	Ticket  *Ticket           `json:"ticket,omitempty"`
	Agent   *Agent            `json:"agent,omitempty"`
}

// UnmarshalJSON decodes the params of permissions/decide.
func (d *DecideParams) UnmarshalJSON(b []byte) error {
	*d = DecideParams{}
	return fields.Decode(b, d)
}

// A Verdict is what a decision says.
type Verdict string

// Verdicts. A refusal wins over an allowance; ask leaves it to the user.
const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
	Ask   Verdict = "ask"
)

// A Decision answers a permission request.
type Decision struct {
	Verdict Verdict `json:"decision" wire:"required"`
	// Message says why; it is told to the agent with a refusal.
	Message string `json:"message,omitempty"`
	// Plugin, not on the wire, is the id of the plugin whose answer decided
	// a decision the Host combined, or that could not answer (restarting,
	// disabled); "" when none did (no answer in time, nobody asked).
	Plugin string `json:"-"`
}

// UnmarshalJSON decodes a decision; a verdict not allow, deny or ask fails.
func (d *Decision) UnmarshalJSON(b []byte) error {
	*d = Decision{}
	if err := fields.Decode(b, d); err != nil {
		return err
	}
	switch d.Verdict {
	case Allow, Deny, Ask:
		return nil
	}
	return fields.Errorf("decision", "want allow, deny or ask, not %q", string(d.Verdict))
}

// Capabilities is what the Host can do for a plugin (EscouadeCapabilities).
type Capabilities struct {
	Batch   bool `json:"batch"`   // batches, both ways
	Secrets bool `json:"secrets"` // secrets/get
	Log     bool `json:"log"`     // the log notification
	// Attach: a plugin's attached agents are given again after a restart.
	Attach bool `json:"attach"`
}

// InitializeParams are the params of initialize, the first message.
type InitializeParams struct {
	ProtocolVersion int          `json:"protocolVersion" wire:"required"`
	Escouade        HostInfo     `json:"escouade" wire:"required"`
	Plugin          PluginInfo   `json:"plugin" wire:"required"`
	Lang            string       `json:"lang,omitempty"` // the interface's language (fr, en)
	Capabilities    Capabilities `json:"capabilities" wire:"required"`
}

// HostInfo names the Host's version in initialize.
type HostInfo struct {
	Version string `json:"version" wire:"required"`
}

// PluginInfo is the plugin as its manifest says, in initialize.
type PluginInfo struct {
	ID      string `json:"id" wire:"required"`
	Version string `json:"version" wire:"required"`
}

// UnmarshalJSON decodes the params of initialize.
func (ip *InitializeParams) UnmarshalJSON(b []byte) error {
	*ip = InitializeParams{}
	return fields.Decode(b, ip)
}

// InitializeResult is a plugin's answer to initialize.
type InitializeResult struct {
	// ProtocolVersion is the plugin's; another than the Host's stops it.
	ProtocolVersion int `json:"protocolVersion" wire:"required"`
	// Capabilities is what the plugin can do; never nil on the wire.
	Capabilities map[string]any `json:"capabilities" wire:"required"`
}

// UnmarshalJSON decodes an answer to initialize.
func (r *InitializeResult) UnmarshalJSON(b []byte) error {
	*r = InitializeResult{}
	return fields.Decode(b, r)
}

// AttachParams attach an agent: its key in later requests, and who it is.
type AttachParams struct {
	Key   string `json:"key" wire:"required"`
	Agent Agent  `json:"agent" wire:"required"`
}

// UnmarshalJSON decodes the params of agent/attach.
func (a *AttachParams) UnmarshalJSON(b []byte) error {
	*a = AttachParams{}
	return fields.Decode(b, a)
}
