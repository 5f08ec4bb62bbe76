package protocol

import (
	"encoding/json"
	"fmt"
	"shinken.dev/go/internal/strictjson"
	"strings"
)

// A runtime's gate (package escouade/gate for Shinken) sends every
// program the agent asks to run, whatever its form, as a
// PermissionRequest of kind KindCommand, in one shape (CommandInput):
//
//	{"id": "…", "kind": "command", "tool": "exec",
//	 "input": {"command": "sh -c 'echo hi'", "argv": ["sh", "-c", "echo hi"],
//	           "cwd": "/repo", "env": {"CI": "1"}}}
//
// input.command is the whole command line as a shell reads it: a shell
// line as written, or an argv quoted for a POSIX shell. A plugin written
// from the protocol's example ({command: 'npm test'}) thus sees every
// program, and "sh -c" runs nothing it did not see: a judgement on a
// prefix of command (rm, git push) holds for both forms, one on argv[0]
// must also look into a shell's line (argv ["/bin/sh", "-c", line]).
//
// A gate may also show what runs (input.program, program_id, commands,
// stdin), so that a guard need not parse a shell line nor guess what PATH
// finds; input.dynamic says some of it is known only when it runs (a
// $VAR, eval…): a careful guard refuses that, or asks. Package
// escouade/gate's doc lists what is dynamic.
const (
	// KindCommand is the kind of a request to run a program.
	KindCommand = "command"
	// ToolExec is the tool of a request to run a program (the ACI's exec).
	ToolExec = "exec"
	// ToolLaunchApp is the ACI's launch_app: argv is the app and its args.
	ToolLaunchApp = "launch_app"

	// KindRead is the kind of a request to read a file or list a folder:
	// input.path is the path, absolute, as the agent's tool will open it.
	KindRead = "read"
	// KindEdit is the kind of a request to write, append, make, move or
	// delete a file or folder: input.path, and input.to for a move.
	KindEdit = "edit"
	// ToolShell is the tool of a request to start an interactive shell
	// (input.interactive), and of each line typed into it, before it runs.
	ToolShell = "shell"
)

// MaxStdinShown bounds input.stdin; past it input.stdin_cut is set.
const MaxStdinShown = 64 << 10

// CommandInput is the input of a request of kind command.
type CommandInput struct {
	// Command is the whole command line, as one string.
	Command string `json:"command"`
	// Argv is the program and its arguments, as they will be run.
	Argv []string `json:"argv"`
	// Cwd is the folder the program runs in; "" when the agent named none.
	Cwd string `json:"cwd,omitempty"`
	// Env is set over the runtime's environment; nil when the agent set none.
	Env map[string]string `json:"env,omitempty"`
	// Program is the real file Argv[0] names (symlinks resolved), found
	// on the PATH of the program's environment, Env included; "" when the
	// gate did not look, or found none.
	Program string `json:"program,omitempty"`
	// Commands are the simple commands that run, each command a wrapper
	// runs (env, sudo, sh -c…) after it; nil when the gate did not look.
	Commands []SimpleCommand `json:"commands,omitempty"`
	// Dynamic says that some of what runs is known only when it runs: a
	// word Commands gives as written, or a command it cannot see.
	Dynamic bool `json:"dynamic,omitempty"`
	// ProgramID identifies the file Program names; nil when none was found.
	ProgramID *FileID `json:"program_id,omitempty"`
	// Stdin is what the program reads on its standard input, its first
	// MaxStdinShown bytes; "" when it reads nothing.
	Stdin string `json:"stdin,omitempty"`
	// StdinCut says that Stdin holds only the first MaxStdinShown bytes.
	StdinCut bool `json:"stdin_cut,omitempty"`
	// Interactive says that the program reads what to run as it runs (a
	// shell started for typing): what it will run is not in the request.
	Interactive bool `json:"interactive,omitempty"`
}

// A FileID identifies a program's file, whatever name or link reached it:
// allowing by FileID, a guard is not fooled by a copy or a link.
type FileID struct {
	// Dev and Ino are the file's device and inode numbers.
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
	// SHA256 is the hex SHA-256 of the file's contents.
	SHA256 string `json:"sha256"`
}

// A Redirect is one redirection of a simple command (2> file).
type Redirect struct {
	// Op is the operator as written, without its descriptor (">", ">>",
	// "<", "<>", ">|", "&>", "&>>", ">&", "<&", "<<", "<<<").
	Op string `json:"op"`
	// FD is the descriptor it applies to, when written (2 in 2>f).
	FD string `json:"fd,omitempty"`
	// Target is the word it names, as the shell reads it (a file, a
	// descriptor, a here-string's text, a here-document's body).
	Target string `json:"target"`
}

// A SimpleCommand is one command a request runs.
type SimpleCommand struct {
	// Argv is its words as the shell reads them (quotes removed, \rm as
	// rm), a word known only when it runs as written; empty for
	// redirections alone (> file).
	Argv []string `json:"argv"`
	// Env are the variables it gets over the runtime's environment: the
	// exec's, a wrapper's (env X=1), the line's (PATH=/x git).
	Env map[string]string `json:"env,omitempty"`
	// Program is the file Argv[0] names, found on the PATH it runs
	// with, symlinks resolved; "" for a shell's builtin, or one not found.
	Program string `json:"program,omitempty"`
	// ProgramID identifies the file Program names; nil when none was found.
	ProgramID *FileID `json:"program_id,omitempty"`
	// Redirects are the command's redirections, in the order written.
	Redirects []Redirect `json:"redirects,omitempty"`
}

// ShellCommand is the input of a shell line: argv ["/bin/sh", "-c", line].
func ShellCommand(line string) CommandInput {
	return CommandInput{Command: line, Argv: []string{"/bin/sh", "-c", line}}
}

// ArgvCommand is the input of argv run word for word: command is argv
// quoted for a POSIX shell, each word that needs it in single quotes.
func ArgvCommand(argv []string) CommandInput {
	return CommandInput{Command: quoteCommand(argv), Argv: append([]string(nil), argv...)}
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
		m["env"] = anyMap(in.Env)
	}
	if in.Program != "" {
		m["program"] = in.Program
	}
	if in.Commands != nil {
		cmds := make([]any, len(in.Commands))
		for i, c := range in.Commands {
			argv := make([]any, len(c.Argv))
			for j, a := range c.Argv {
				argv[j] = a
			}
			cm := map[string]any{"argv": argv}
			if c.Env != nil {
				cm["env"] = anyMap(c.Env)
			}
			if c.Program != "" {
				cm["program"] = c.Program
			}
			if c.ProgramID != nil {
				cm["program_id"] = c.ProgramID.value()
			}
			if len(c.Redirects) > 0 {
				rs := make([]any, len(c.Redirects))
				for j, r := range c.Redirects {
					rm := map[string]any{"op": r.Op, "target": r.Target}
					if r.FD != "" {
						rm["fd"] = r.FD
					}
					rs[j] = rm
				}
				cm["redirects"] = rs
			}
			cmds[i] = cm
		}
		m["commands"] = cmds
	}
	if in.Dynamic {
		m["dynamic"] = true
	}
	if in.ProgramID != nil {
		m["program_id"] = in.ProgramID.value()
	}
	if in.Stdin != "" {
		m["stdin"] = in.Stdin
	}
	if in.StdinCut {
		m["stdin_cut"] = true
	}
	if in.Interactive {
		m["interactive"] = true
	}
	return m
}

func (id *FileID) value() map[string]any {
	return map[string]any{"dev": id.Dev, "ino": id.Ino, "sha256": id.SHA256}
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Command decodes the input of a request of kind command; another kind,
// or an input with no command, is an error.
func (r *PermissionRequest) Command() (CommandInput, error) {
	var in CommandInput
	if r.Kind != KindCommand {
		return in, fmt.Errorf("escouade: a request of kind %q is not a command", r.Kind)
	}
	b, err := json.Marshal(r.Input)
	if err != nil {
		return in, fmt.Errorf("escouade: request.input: %w", err)
	}
	// By the module's strict decoder: keys as written (encoding/json would
	// take "COMMAND" for command), unknown ones left for later versions.
	if err := (strictjson.Options{Open: true, NullIsZero: true}).Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("escouade: request.input: %w", err)
	}
	if _, ok := r.Input["command"].(string); !ok {
		return in, &FieldError{Path: "input.command", Err: fmt.Errorf("missing")}
	}
	return in, nil
}

// quoteCommand joins argv into one command line that a POSIX shell reads
// back as argv: a word made only of letters, digits and -_./:=@%+, is left
// as it is, any other is put in single quotes, each quote in it closing
// them, escaped with a backslash, and opening them again.
func quoteCommand(argv []string) string {
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
