// Package hosttool holds the machine tools' plumbing (files, the shell,
// open): the fixed shell scripts the agent's side sends as exec, and the
// recognizer the runtime reads them back with, so that a plugin judges
// what a tool does (a read of a path, an edit, a typed line), never the
// script that carries it out.
//
// A tool's exec is always argv ["/bin/sh", "-c", Script.Text, Arg0,
// args…], with no env: its arguments are positional parameters, never
// spliced into the script, so no argument can change what the script
// does. The runtime recognizes such an exec whoever sent it (the MCP
// server, the Go client, or an agent by hand over ACI) and asks its
// Authorizer about the Intent; any other exec is judged as the command it
// is. An exec that sets env, or whose script text is not one of these
// word for word, is not recognized.
package hosttool

import (
	"fmt"
	"slices"
)

// Arg0 is the $0 of every tool script.
const Arg0 = "shinken-tool"

// The kinds of an Intent, as the plugin protocol names them.
const (
	KindRead    = "read"
	KindEdit    = "edit"
	KindCommand = "command"
)

// An Intent is what one tool exec does.
type Intent struct {
	// Tool is the machine tool: read_file, write_file, list_files, stat,
	// mkdir, move, delete, shell, open…
	Tool string
	// Kind is KindRead, KindEdit or KindCommand.
	Kind string
	// Path is what a read or an edit reads or changes, as the script
	// will name it: absolute and clean (the scripts take no other).
	Path string
	// To is a move's destination.
	To string
	// Line is a command's line, as a shell will read it: the line typed
	// into a shell.
	Line string
	// Dir is the working folder Line runs in (absolute): the shell's, as
	// the lines typed before moved it.
	Dir string
	// Argv is a command's program and arguments, when it runs one word
	// for word (open's opener, the shell started).
	Argv []string
	// Interactive says the command reads what to run as it runs (a shell
	// started for typing).
	Interactive bool
	// Dynamic says that what the command runs is known only when it runs
	// (open's opener runs the user's file associations).
	Dynamic bool
}

// A Script is one tool's plumbing.
type Script struct {
	// Tool names the tool (Intent.Tool).
	Tool string
	// Text is the script, run by /bin/sh -c with Arg0 as $0.
	Text string
	// Intent reads what the script does from its arguments ($1…) and its
	// standard input; an error when they do not fit it (the exec is then
	// refused as an invalid tool call, never judged as something else).
	Intent func(args []string, stdin *string) (Intent, error)
}

// Argv is the exec argv that runs s with args.
func (s *Script) Argv(args ...string) []string {
	return append([]string{"/bin/sh", "-c", s.Text, Arg0}, args...)
}

// scripts are every tool's plumbing.
var scripts = []*Script{
	ReadFile,
	WriteFile,
	ListFiles,
	Stat,
	Exists,
	Mkdir,
	Move,
	Delete,
	Open,
	ShellStart,
	ShellType,
	ShellLine,
	ShellControl,
	WindowProbe,
	CommandStart, CommandInput, CommandRead, CommandList, CommandControl,
}

var byText = func() map[string]*Script {
	m := make(map[string]*Script, len(scripts))
	for _, s := range scripts {
		if m[s.Text] != nil {
			panic("hosttool: two tools share a script: " + s.Tool)
		}
		m[s.Text] = s
	}
	return m
}()

// Recognize returns the Intent of an exec (argv form; a shell line is
// never a tool's), and whether it is a tool's plumbing at all. An exec
// that is a tool's script but whose arguments do not fit it returns an
// error.
func Recognize(argv []string, env map[string]string, stdin *string) (Intent, bool, error) {
	if len(argv) < 4 || argv[0] != "/bin/sh" || argv[1] != "-c" || argv[3] != Arg0 || env != nil {
		return Intent{}, false, nil
	}
	s := byText[argv[2]]
	if s == nil {
		return Intent{}, false, nil
	}
	in, err := s.Intent(slices.Clone(argv[4:]), stdin)
	if err != nil {
		return Intent{}, true, fmt.Errorf("%s: %w", s.Tool, err)
	}
	in.Tool = s.Tool
	return in, true, nil
}
