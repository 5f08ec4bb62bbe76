package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The request a plugin sees for a program the agent wants to run.
//
// A runtime's gate (package escouade/gate for a Shinken runtime) sends
// every program the agent asks for as a PermissionRequest of kind
// KindCommand, whatever form the agent used, so that a plugin judges one
// shape:
//
//	{"id": "…", "kind": "command", "tool": "exec",
//	 "input": {"command": "sh -c 'echo hi'", "argv": ["sh", "-c", "echo hi"],
//	           "cwd": "/repo", "env": {"CI": "1"}}}
//
// input.command is always the whole command line, one string, as a shell
// would read it: a shell line as the agent wrote it, or an argv with each
// word quoted for a POSIX shell (QuoteCommand) when it needs quoting. A
// plugin written from the protocol's own example ({command: 'npm test'})
// thus sees every program, argv or shell, and "sh -c" runs nothing it did
// not see. input.argv is what will be run, word for word: a shell line is
// ["/bin/sh", "-c", line]. input.cwd and input.env are present when the
// agent set them; env is what is set over the runtime's environment.
// A judgement on a prefix of command (rm, git push) holds for the argv and
// shell forms alike; one on argv[0] must also look into a shell's line.
const (
	// KindCommand is the kind of a request to run a program.
	KindCommand = "command"
	// ToolExec is the tool of a request to run a program (the ACI's exec).
	ToolExec = "exec"
	// ToolLaunchApp is the tool of a request to start a desktop application
	// (the ACI's launch_app); argv is the application and its arguments.
	ToolLaunchApp = "launch_app"
)

// CommandInput is the input of a request of kind command.
type CommandInput struct {
	// Command is the whole command line, as one string.
	Command string `json:"command"`
	// Argv is the program and its arguments, as they will be run.
	Argv []string `json:"argv"`
	// Cwd is the folder the program runs in; "" when the agent named none.
	Cwd string `json:"cwd,omitempty"`
	// Env is set over the runtime's environment; nil when the agent set
	// nothing.
	Env map[string]string `json:"env,omitempty"`
}

// ShellCommand is the input of a shell line: command is the line as
// written, and argv ["/bin/sh", "-c", line].
func ShellCommand(line string) CommandInput {
	return CommandInput{Command: line, Argv: []string{"/bin/sh", "-c", line}}
}

// ArgvCommand is the input of a program run word for word: command is
// argv quoted for a POSIX shell.
func ArgvCommand(argv []string) CommandInput {
	return CommandInput{Command: QuoteCommand(argv), Argv: append([]string(nil), argv...)}
}

// Map returns the input as a request's Input.
func (in CommandInput) Map() map[string]any {
	argv := make([]any, len(in.Argv))
	for i, a := range in.Argv {
		argv[i] = a
	}
	m := map[string]any{"command": in.Command, "argv": argv}
	if in.Cwd != "" {
		m["cwd"] = in.Cwd
	}
	if in.Env != nil {
		env := make(map[string]any, len(in.Env))
		for k, v := range in.Env {
			env[k] = v
		}
		m["env"] = env
	}
	return m
}

// Command decodes the input of a request of kind command. A request of
// another kind, or whose input has no command, is an error.
func (r *PermissionRequest) Command() (CommandInput, error) {
	var in CommandInput
	if r.Kind != KindCommand {
		return in, fmt.Errorf("escouade: a request of kind %q is not a command", r.Kind)
	}
	b, err := json.Marshal(r.Input)
	if err != nil {
		return in, fmt.Errorf("escouade: request.input: %w", err)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("escouade: request.input: %w", err)
	}
	if _, ok := r.Input["command"].(string); !ok {
		return in, &FieldError{Path: "input.command", Err: fmt.Errorf("missing")}
	}
	return in, nil
}

// QuoteCommand joins argv into one command line that a POSIX shell reads
// back as argv: a word made only of letters, digits and -_./:=@%+, is left
// as it is, any other is put in single quotes, each quote in it closing
// them, escaped with a backslash, and opening them again.
func QuoteCommand(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
