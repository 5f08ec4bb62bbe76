package gate

import (
	"fmt"

	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
)

// intentRequest is the request for a machine tool's exec: what the tool
// does, in the protocol's kinds (a read or an edit of a path, a command),
// never the script that carries it out.
func intentRequest(in shinken.Intent, id string, env []string) (protocol.PermissionRequest, error) {
	req := protocol.PermissionRequest{ID: id, Kind: in.Kind, Tool: in.Tool}
	switch in.Kind {
	case protocol.KindRead, protocol.KindEdit:
		if in.Path == "" {
			return req, fmt.Errorf("gate: a %s of no path", in.Kind)
		}
		req.Input = map[string]any{"path": in.Path}
		if in.To != "" {
			req.Input["to"] = in.To
		}
	case protocol.KindCommand:
		var ci protocol.CommandInput
		r := newReader(env, nil, in.Dir)
		switch {
		case in.Line != "":
			ci = protocol.ShellCommand(in.Line)
			ci.Cwd = in.Dir
			r.line(in.Line, 0)
		case len(in.Argv) > 0:
			ci = protocol.ArgvCommand(in.Argv)
			ci.Program = r.program(in.Argv[0], r.path)
			r.argv(in.Argv, nil, 0)
		default:
			return req, fmt.Errorf("gate: a command of no line nor argv")
		}
		ci.Commands, ci.Dynamic = r.commands, r.dynamic || in.Interactive || in.Dynamic
		ci.Interactive = in.Interactive
		req.Input = ci.Map()
	default:
		return req, fmt.Errorf("gate: an intent of kind %q", in.Kind)
	}
	return req, nil
}
