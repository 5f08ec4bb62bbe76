package protocol

import (
	"encoding/json"
	"fmt"
	"time"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/internal/jsonrpc"
)

// The types in this file are the protocol's messages, as both sides see
// them: the Host encodes them, a Go plugin (package plugin) decodes them.
// Their UnmarshalJSON methods are strict: keys match only as written, a
// field given twice is an error, and the error names the field's path.

// A Project is a project, by its id and its name.
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Private: nothing of the project goes to a plugin that is not turned
	// on for it.
	Private bool `json:"private"`
}

// A Ticket is a ticket, by its id, its key (like ESC-12) and its title.
type Ticket struct {
	ID    string `json:"id"`
	Key   string `json:"key"`
	Title string `json:"title"`
}

// An Agent is an agent, by its id and its name.
type Agent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// A Fact is what changed, and the project, ticket and agent it is about.
type Fact struct {
	Name    string `json:"name"`    // one of the protocol's fact names
	Version int    `json:"version"` // the version of this fact's fields
	// Seq numbers the facts since the Host started: two facts come in the
	// order of their numbers.
	Seq     int64    `json:"seq"`
	At      string   `json:"at"` // when, in RFC 3339 (see Time)
	Project *Project `json:"project,omitempty"`
	Ticket  *Ticket  `json:"ticket,omitempty"`
	Agent   *Agent   `json:"agent,omitempty"`
	// Data is what the fact says, a JSON object whose fields depend on the
	// fact; it is left raw so that a plugin decodes only what it reads.
	Data json.RawMessage `json:"data"`
}

// Time parses At.
func (f *Fact) Time() (time.Time, error) { return time.Parse(time.RFC3339Nano, f.At) }

var factFields = []string{"name", "version", "seq", "at", "project", "ticket", "agent", "data"}

// UnmarshalJSON decodes a fact; fields it does not know are ignored, as the
// protocol asks.
func (f *Fact) UnmarshalJSON(b []byte) error {
	*f = Fact{}
	seen, err := fields.Object(b, factFields, false, func(i int, v []byte) (err error) {
		switch i {
		case 0:
			f.Name, err = fields.String(v)
		case 1:
			var n int64
			n, err = fields.Int(v)
			f.Version = int(n)
		case 2:
			f.Seq, err = fields.Int(v)
		case 3:
			f.At, err = fields.String(v)
		case 4:
			f.Project = new(Project)
			err = f.Project.UnmarshalJSON(v)
		case 5:
			f.Ticket = new(Ticket)
			err = f.Ticket.UnmarshalJSON(v)
		case 6:
			f.Agent = new(Agent)
			err = f.Agent.UnmarshalJSON(v)
		case 7:
			if jsonrpc.KindOf(v) != jsonrpc.KindObject {
				return fields.ErrWantObject
			}
			f.Data = v
		}
		return err
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b10001111, factFields)
}

var projectFields = []string{"id", "name", "private"}

// UnmarshalJSON decodes a project.
func (pr *Project) UnmarshalJSON(b []byte) error {
	*pr = Project{}
	seen, err := fields.Object(b, projectFields, false, func(i int, v []byte) (err error) {
		switch i {
		case 0:
			pr.ID, err = fields.String(v)
		case 1:
			pr.Name, err = fields.String(v)
		case 2:
			pr.Private, err = fields.Bool(v)
		}
		return err
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b111, projectFields)
}

var ticketFields = []string{"id", "key", "title"}

// UnmarshalJSON decodes a ticket.
func (t *Ticket) UnmarshalJSON(b []byte) error {
	*t = Ticket{}
	seen, err := fields.Object(b, ticketFields, false, func(i int, v []byte) (err error) {
		switch i {
		case 0:
			t.ID, err = fields.String(v)
		case 1:
			t.Key, err = fields.String(v)
		case 2:
			t.Title, err = fields.String(v)
		}
		return err
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b111, ticketFields)
}

var agentFields = []string{"id", "name"}

// UnmarshalJSON decodes an agent.
func (a *Agent) UnmarshalJSON(b []byte) error {
	*a = Agent{}
	seen, err := fields.Object(b, agentFields, false, func(i int, v []byte) (err error) {
		switch i {
		case 0:
			a.ID, err = fields.String(v)
		case 1:
			a.Name, err = fields.String(v)
		}
		return err
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b11, agentFields)
}

// A PermissionRequest is what an agent asks to do.
type PermissionRequest struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`           // like command, edit, fetch
	Tool string `json:"tool,omitempty"` // the harness's tool, like Bash
	// Input is what the tool was given, like {"command": "npm test"}.
	Input map[string]any `json:"input,omitempty"`
}

var requestFields = []string{"id", "kind", "tool", "input"}

// UnmarshalJSON decodes a permission request.
func (r *PermissionRequest) UnmarshalJSON(b []byte) error {
	*r = PermissionRequest{}
	seen, err := fields.Object(b, requestFields, false, func(i int, v []byte) (err error) {
		switch i {
		case 0:
			r.ID, err = fields.String(v)
		case 1:
			r.Kind, err = fields.String(v)
		case 2:
			r.Tool, err = fields.String(v)
		case 3:
			if jsonrpc.KindOf(v) != jsonrpc.KindObject {
				return fields.ErrWantObject
			}
			if err := fields.Strict(v); err != nil {
				return err
			}
			err = json.Unmarshal(v, &r.Input)
		}
		return err
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b11, requestFields)
}

// DecideParams are the params of permissions/decide: a request and where it
// comes from.
type DecideParams struct {
	Request PermissionRequest `json:"request"`
	Project Project           `json:"project"`
	Ticket  *Ticket           `json:"ticket,omitempty"`
	Agent   *Agent            `json:"agent,omitempty"`
}

var decideFields = []string{"request", "project", "ticket", "agent"}

// UnmarshalJSON decodes the params of permissions/decide.
func (d *DecideParams) UnmarshalJSON(b []byte) error {
	*d = DecideParams{}
	seen, err := fields.Object(b, decideFields, false, func(i int, v []byte) error {
		switch i {
		case 0:
			return d.Request.UnmarshalJSON(v)
		case 1:
			return d.Project.UnmarshalJSON(v)
		case 2:
			d.Ticket = new(Ticket)
			return d.Ticket.UnmarshalJSON(v)
		default:
			d.Agent = new(Agent)
			return d.Agent.UnmarshalJSON(v)
		}
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b11, decideFields)
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
	Verdict Verdict `json:"decision"`
	// Message says why; it is told to the agent with a refusal.
	Message string `json:"message,omitempty"`
	// Plugin is the id of the plugin whose answer decided, in a decision the
	// Host combined, or of the plugin that could not answer because it is
	// not running (restarting, disabled); "" when no plugin decided (nobody
	// answered in time, or nobody was asked). It is not part of the wire
	// message.
	Plugin string `json:"-"`
}

var decisionFields = []string{"decision", "message"}

// UnmarshalJSON decodes a decision; a verdict other than allow, deny and ask
// is an error.
func (d *Decision) UnmarshalJSON(b []byte) error {
	*d = Decision{}
	seen, err := fields.Object(b, decisionFields, false, func(i int, v []byte) error {
		s, err := fields.String(v)
		if err != nil {
			return err
		}
		if i == 1 {
			d.Message = s
			return nil
		}
		switch v := Verdict(s); v {
		case Allow, Deny, Ask:
			d.Verdict = v
			return nil
		}
		return fmt.Errorf("want allow, deny or ask, not %q", s)
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b1, decisionFields)
}

// Capabilities is what the Host can do for a plugin (EscouadeCapabilities).
type Capabilities struct {
	Batch   bool `json:"batch"`   // batches, both ways
	Secrets bool `json:"secrets"` // secrets/get
	Log     bool `json:"log"`     // the log notification
	// Attach: the agents attached to a plugin are given again after a
	// restart.
	Attach bool `json:"attach"`
}

// InitializeParams are the params of initialize, the first message.
type InitializeParams struct {
	ProtocolVersion int          `json:"protocolVersion"`
	Escouade        HostInfo     `json:"escouade"`
	Plugin          PluginInfo   `json:"plugin"`
	Lang            string       `json:"lang,omitempty"` // the interface's language (fr, en)
	Capabilities    Capabilities `json:"capabilities"`
}

// HostInfo names the Host's version in initialize.
type HostInfo struct {
	Version string `json:"version"`
}

// PluginInfo is the plugin as its manifest says, in initialize.
type PluginInfo struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

var initFields = []string{"protocolVersion", "escouade", "plugin", "lang", "capabilities"}

// UnmarshalJSON decodes the params of initialize.
func (ip *InitializeParams) UnmarshalJSON(b []byte) error {
	*ip = InitializeParams{}
	seen, err := fields.Object(b, initFields, false, func(i int, v []byte) (err error) {
		switch i {
		case 0:
			var n int64
			n, err = fields.Int(v)
			ip.ProtocolVersion = int(n)
		case 1:
			var s uint64
			s, err = fields.Object(v, []string{"version"}, false, func(_ int, v []byte) (err error) {
				ip.Escouade.Version, err = fields.String(v)
				return err
			})
			if err == nil {
				err = fields.Require(s, 1, []string{"version"})
			}
		case 2:
			names := []string{"id", "version"}
			var s uint64
			s, err = fields.Object(v, names, false, func(i int, v []byte) (err error) {
				if i == 0 {
					ip.Plugin.ID, err = fields.String(v)
				} else {
					ip.Plugin.Version, err = fields.String(v)
				}
				return err
			})
			if err == nil {
				err = fields.Require(s, 0b11, names)
			}
		case 3:
			ip.Lang, err = fields.String(v)
		case 4:
			flags := []*bool{&ip.Capabilities.Batch, &ip.Capabilities.Secrets, &ip.Capabilities.Log, &ip.Capabilities.Attach}
			_, err = fields.Object(v, []string{"batch", "secrets", "log", "attach"}, false, func(i int, v []byte) (err error) {
				*flags[i], err = fields.Bool(v)
				return err
			})
		}
		return err
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b10111, initFields)
}

// InitializeResult is a plugin's answer to initialize.
type InitializeResult struct {
	// ProtocolVersion is the version the plugin speaks; another than the
	// Host's stops it.
	ProtocolVersion int `json:"protocolVersion"`
	// Capabilities is what the plugin can do; never nil on the wire.
	Capabilities map[string]any `json:"capabilities"`
}

var initResultFields = []string{"protocolVersion", "capabilities"}

// UnmarshalJSON decodes an answer to initialize.
func (r *InitializeResult) UnmarshalJSON(b []byte) error {
	*r = InitializeResult{}
	seen, err := fields.Object(b, initResultFields, false, func(i int, v []byte) error {
		if i == 0 {
			n, err := fields.Int(v)
			r.ProtocolVersion = int(n)
			return err
		}
		if jsonrpc.KindOf(v) != jsonrpc.KindObject {
			return fields.ErrWantObject
		}
		if err := fields.Strict(v); err != nil {
			return err
		}
		return json.Unmarshal(v, &r.Capabilities)
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b11, initResultFields)
}

// AttachParams are the params of agent/attach: an agent attached to the
// plugin, by the key that names it in later requests, and who it is.
type AttachParams struct {
	Key   string `json:"key"`
	Agent Agent  `json:"agent"`
}

var attachFields = []string{"key", "agent"}

// UnmarshalJSON decodes the params of agent/attach.
func (a *AttachParams) UnmarshalJSON(b []byte) error {
	*a = AttachParams{}
	seen, err := fields.Object(b, attachFields, false, func(i int, v []byte) (err error) {
		if i == 0 {
			a.Key, err = fields.String(v)
			return err
		}
		return a.Agent.UnmarshalJSON(v)
	})
	if err != nil {
		return err
	}
	return fields.Require(seen, 0b11, attachFields)
}
