package gate_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestRequestShowsWhatRuns: the request shows the program argv[0] names
// on the PATH it will be found on, every simple command of a shell line
// as the shell reads it, the commands wrappers run, and whether some of
// it is known only when it runs: what a guard matching the start of
// input.command, or argv[0], would miss.
func TestRequestShowsWhatRuns(t *testing.T) {
	bin := t.TempDir() // a folder the agent wrote, with its own git
	git := filepath.Join(bin, "git")
	if err := os.WriteFile(git, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rm, err := filepath.EvalSymlinks("/bin/rm")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	rmProgram := func(c protocol.SimpleCommand) bool {
		p, err := filepath.EvalSymlinks(c.Program)
		return err == nil && p == rm
	}
	cmd := func(argv ...string) protocol.SimpleCommand { return protocol.SimpleCommand{Argv: argv} }
	tests := []struct {
		name     string
		action   aci.Action
		program  string // "" for not checked
		commands []protocol.SimpleCommand
		dynamic  bool
	}{
		{"argv with the agent's PATH", aci.Action{Argv: []string{"git", "status"}, Env: map[string]string{"PATH": bin}}, git,
			[]protocol.SimpleCommand{{Argv: []string{"git", "status"}, Env: map[string]string{"PATH": bin}, Program: git}}, false},
		{"a shell line's own PATH", aci.Action{Shell: ptr("PATH=" + bin + " git status")}, sh,
			[]protocol.SimpleCommand{{Argv: []string{"git", "status"}, Env: map[string]string{"PATH": bin}, Program: git}}, false},
		{"an exported PATH", aci.Action{Shell: ptr("export PATH=" + bin + "; git status")}, "",
			[]protocol.SimpleCommand{cmd("export", "PATH="+bin), {Argv: []string{"git", "status"}, Program: git}}, false},
		{"backslash", aci.Action{Shell: ptr(`\rm -rf /`)}, "", []protocol.SimpleCommand{cmd("rm", "-rf", "/")}, false},
		{"quotes", aci.Action{Shell: ptr(`'r'"m" "-rf" /`)}, "", []protocol.SimpleCommand{cmd("rm", "-rf", "/")}, false},
		{"bash -c", aci.Action{Argv: []string{"bash", "-c", "echo hi && rm -rf /"}}, "",
			[]protocol.SimpleCommand{cmd("bash", "-c", "echo hi && rm -rf /"), cmd("echo", "hi"), cmd("rm", "-rf", "/")}, false},
		{"sh -ec in a line", aci.Action{Shell: ptr(`sh -ec 'rm -rf /'`)}, "",
			[]protocol.SimpleCommand{cmd("sh", "-ec", "rm -rf /"), cmd("rm", "-rf", "/")}, false},
		{"env", aci.Action{Argv: []string{"env", "-i", "PATH=" + bin, "git", "push"}}, "",
			[]protocol.SimpleCommand{cmd("env", "-i", "PATH="+bin, "git", "push"), {Argv: []string{"git", "push"}, Env: map[string]string{"PATH": bin}, Program: git}}, false},
		{"wrappers", aci.Action{Shell: ptr(`command nohup nice -n 5 timeout 10 rm x`)}, "",
			[]protocol.SimpleCommand{cmd("command", "nohup", "nice", "-n", "5", "timeout", "10", "rm", "x"), cmd("nohup", "nice", "-n", "5", "timeout", "10", "rm", "x"),
				cmd("nice", "-n", "5", "timeout", "10", "rm", "x"), cmd("timeout", "10", "rm", "x"), cmd("rm", "x")}, false},
		{"a pipeline and a substitution", aci.Action{Shell: ptr(`echo "$(rm x)" | tee y`)}, "",
			[]protocol.SimpleCommand{cmd("echo", "$(rm x)"), cmd("rm", "x"), cmd("tee", "y")}, true},
		{"a variable", aci.Action{Shell: ptr(`$CMD -rf /`)}, "", []protocol.SimpleCommand{cmd("$CMD", "-rf", "/")}, true},
		{"a glob", aci.Action{Shell: ptr(`rm *.go`)}, "", []protocol.SimpleCommand{cmd("rm", "*.go")}, true},
		{"eval", aci.Action{Shell: ptr(`eval "rm x"`)}, "", []protocol.SimpleCommand{cmd("eval", "rm x")}, true},
		{"a script on standard input", aci.Action{Argv: []string{"bash"}}, "", []protocol.SimpleCommand{cmd("bash")}, true},
		{"a line that does not parse", aci.Action{Shell: ptr(`echo 'open`)}, "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &tt.action}, "r")
			if err != nil {
				t.Fatal(err)
			}
			in, err := req.Command()
			if err != nil {
				t.Fatal(err)
			}
			if tt.program != "" && in.Program != tt.program {
				t.Errorf("program %q, want %q", in.Program, tt.program)
			}
			// Programs found on the machine's PATH are the machine's:
			// only rm's is compared, and only the ones the test made.
			for i := range in.Commands {
				c := &in.Commands[i]
				if (c.ProgramID != nil) != (c.Program != "") {
					t.Errorf("%q: program %q, identity %v", c.Argv, c.Program, c.ProgramID)
				}
				c.ProgramID = nil
				switch {
				case c.Argv[0] == "rm" && !rmProgram(*c):
					t.Errorf("rm's program: %q", c.Program)
				case c.Program != git:
					c.Program = ""
				}
			}
			if !reflect.DeepEqual(in.Commands, tt.commands) || in.Dynamic != tt.dynamic {
				t.Errorf("commands %+v dynamic %v\nwant %+v dynamic %v", in.Commands, in.Dynamic, tt.commands, tt.dynamic)
			}
		})
	}
}

// BenchmarkRequest is what showing what runs costs an exec's
// authorization: the request of a shell line and of an argv, beside the
// request as it was made before (the command line and the argv alone,
// protocol.ShellCommand and protocol.ArgvCommand).
func BenchmarkRequest(b *testing.B) {
	line := `cd /repo && PATH=/usr/bin git status --porcelain | grep -v '^??' > /tmp/out; echo "$(date)"`
	argv := []string{"env", "CI=1", "npm", "test", "--", "--watch=false"}
	for _, tt := range []struct {
		name   string
		action aci.Action
		before func() protocol.CommandInput
	}{
		{"shell", aci.Action{Shell: &line}, func() protocol.CommandInput { return protocol.ShellCommand(line) }},
		{"argv", aci.Action{Argv: argv}, func() protocol.CommandInput { return protocol.ArgvCommand(argv) }},
	} {
		b.Run(tt.name+"/gate.Request", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &tt.action}, "r"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tt.name+"/before", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = protocol.PermissionRequest{ID: "r", Kind: protocol.KindCommand, Tool: protocol.ToolExec, Input: tt.before().Map()}
			}
		})
	}
}
