package gate_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestRequestDynamic: for each class of issue 38, the request is dynamic,
// or shows what runs; lines that only look a name up are not what they
// name.
func TestRequestDynamic(t *testing.T) {
	tests := []struct {
		name    string
		action  aci.Action
		dynamic bool
	}{
		{"env -S", aci.Action{Shell: ptr(`env -S 'rm x'`)}, true},
		{"env --split abbreviated", aci.Action{Argv: []string{"env", "--split=rm x"}}, true},
		{"env -C", aci.Action{Shell: ptr(`env -C / ls`)}, true},
		{"GNU time -o", aci.Action{Shell: ptr(`time -o x true`)}, true},
		{"GNU time -f", aci.Action{Shell: ptr(`time -f %e true`)}, true},
		{"sh -c -- line", aci.Action{Shell: ptr(`sh -c -- 'ls'`)}, false},
		{"sh -c -e line", aci.Action{Shell: ptr(`sh -c -e 'ls'`)}, false},
		{"sh -o unknown", aci.Action{Shell: ptr(`sh -o nolog -c 'ls'`)}, false},
		{"bash -i", aci.Action{Argv: []string{"bash", "-ic", "ls"}}, true},
		{"bash -l", aci.Action{Argv: []string{"bash", "--login", "-c", "ls"}}, true},
		{"rbash", aci.Action{Argv: []string{"rbash", "-c", "ls"}}, true},
		{"zsh", aci.Action{Argv: []string{"zsh", "-c", "ls"}}, true},
		{"bash braces", aci.Action{Argv: []string{"bash", "-c", "{r,}m x"}}, true},
		{"bash ANSI-C quotes", aci.Action{Argv: []string{"bash", "-c", `$'\x72m' x`}}, true},
		{"bash translated quotes", aci.Action{Argv: []string{"bash", "-c", `$"rm" x`}}, true},
		{"braces read by dash", aci.Action{Shell: ptr(`echo {a,b}`)}, false},
		{"alias", aci.Action{Shell: ptr("alias ls='rm x'\nls")}, true},
		{"alias listed", aci.Action{Shell: ptr("alias")}, false},
		{"hash -p", aci.Action{Argv: []string{"bash", "-c", "hash -p /bin/rm ls; ls"}}, true},
		{"enable", aci.Action{Argv: []string{"bash", "-c", "enable -n echo; echo"}}, true},
		{"trap with an action", aci.Action{Shell: ptr(`trap 'rm x' EXIT`)}, true},
		{"trap reset", aci.Action{Shell: ptr(`trap - EXIT`)}, false},
		{"shopt", aci.Action{Argv: []string{"bash", "-c", "shopt -s expand_aliases"}}, true},
		{"set -o safe", aci.Action{Shell: ptr(`set -o errexit; ls`)}, false},
		{"a function", aci.Action{Shell: ptr(`ls() { :; }; ls`)}, true},
		{"bash arithmetic", aci.Action{Argv: []string{"bash", "-c", "(( x ))"}}, true},
		{"BASH_ENV in the line", aci.Action{Shell: ptr(`BASH_ENV=x bash -c :`)}, true},
		{"BASH_ENV in env", aci.Action{Argv: []string{"bash", "-c", ":"}, Env: map[string]string{"BASH_ENV": "x"}}, true},
		{"ENV exported", aci.Action{Shell: ptr(`export ENV=x; sh -i`)}, true},
		{"BASH_FUNC_", aci.Action{Argv: []string{"ls"}, Env: map[string]string{"BASH_FUNC_ls%%": "() { :; }"}}, true},
		{"LD_PRELOAD", aci.Action{Shell: ptr(`LD_PRELOAD=/x.so ls`)}, true},
		{"GIT_CONFIG_", aci.Action{Argv: []string{"git", "status"}, Env: map[string]string{"GIT_CONFIG_COUNT": "1"}}, true},
		{"HOME", aci.Action{Shell: ptr(`ls`), Env: map[string]string{"HOME": "/tmp"}}, true},
		{"harmless env", aci.Action{Argv: []string{"ls"}, Env: map[string]string{"LC_ALL": "C"}}, false},
		{"relative PATH", aci.Action{Shell: ptr(`PATH=.:/usr/bin ls`)}, true},
		{"empty PATH entry", aci.Action{Shell: ptr(`PATH=/nonexistent: ls`)}, true},
		{"PATH by for", aci.Action{Shell: ptr(`for PATH in /tmp; do ls; done`)}, true},
		{"PATH by read", aci.Action{Shell: ptr(`read PATH; ls`)}, true},
		{"tilde in PATH", aci.Action{Shell: ptr(`PATH=/usr/bin:~/bin ls`)}, true},
		{"cd then a relative program", aci.Action{Shell: ptr(`cd /tmp && ./x`)}, true},
		{"a program not found", aci.Action{Shell: ptr(`no-such-program-here x`)}, true},
		{"a program made by the line", aci.Action{Shell: ptr(`cp /bin/rm /tmp/ls; ls`)}, true},
		{"python3 -c", aci.Action{Argv: []string{"python3", "-c", "pass"}}, true},
		{"python3 reads stdin", aci.Action{Argv: []string{"python3"}, Stdin: ptr("pass")}, true},
		{"python3 --version", aci.Action{Argv: []string{"python3", "--version"}}, false},
		{"sh reads stdin", aci.Action{Argv: []string{"sh"}, Stdin: ptr("rm x")}, true},
		{"ed", aci.Action{Argv: []string{"ed", "-s"}, Stdin: ptr("!rm x")}, true},
		{"here-document to a shell", aci.Action{Shell: ptr("sh <<EOF\nrm x\nEOF")}, true},
		{"find -exec", aci.Action{Shell: ptr(`find . -exec rm {} \;`)}, true},
		{"find -name", aci.Action{Shell: ptr(`find . -name '*.go'`)}, false},
		{"awk system", aci.Action{Shell: ptr(`awk 'BEGIN{system("rm x")}'`)}, true},
		{"awk print", aci.Action{Shell: ptr(`awk '{print $1}' f`)}, false},
		{"sed e", aci.Action{Shell: ptr(`sed '1e rm x' f`)}, true},
		{"sed s///e", aci.Action{Shell: ptr(`sed 's/a/b/e' f`)}, true},
		{"sed w", aci.Action{Shell: ptr(`sed -n 'w x' f`)}, true},
		{"sed -i after the file", aci.Action{Shell: ptr(`sed 's/a/b/' f -i`)}, true},
		{"sed s///g", aci.Action{Shell: ptr(`sed -e 's/a/b/g' -e '1d;$!N' f`)}, false},
		{"vim -c", aci.Action{Shell: ptr(`vim -c '!rm x'`)}, true},
		{"git -c", aci.Action{Shell: ptr(`git -c alias.x='!rm x' x`)}, true},
		{"git alias", aci.Action{Shell: ptr(`git st`)}, true},
		{"git config", aci.Action{Shell: ptr(`git config core.fsmonitor x`)}, true},
		{"git status", aci.Action{Shell: ptr(`git --no-pager status --short`)}, false},
		{"git by another name", aci.Action{Argv: []string{"/usr/lib/git-core/git-clean", "status"}}, true},
		{"make", aci.Action{Shell: ptr(`make`)}, true},
		{"tar --checkpoint-action", aci.Action{Shell: ptr(`tar -cf a.tar --checkpoint-action=exec=x f`)}, true},
		{"tar -I", aci.Action{Shell: ptr(`tar -I x -cf a.tar f`)}, true},
		{"tar -cf", aci.Action{Shell: ptr(`tar -czf out.tgz f`)}, false},
		{"gdb", aci.Action{Shell: ptr(`gdb -batch -ex 'shell rm x'`)}, true},
		{"xargs", aci.Action{Shell: ptr(`xargs rm`)}, true},
		{"xdg-open", aci.Action{Argv: []string{"xdg-open", "f"}}, true},
		{"ionice", aci.Action{Shell: ptr(`ionice -c3 ls`)}, true},
		{"exec -a", aci.Action{Argv: []string{"bash", "-c", "exec -a ls rm x"}}, false},
		{"sort --compress-program", aci.Action{Shell: ptr(`sort --compress-prog=x f`)}, true},
		{"xdotool exec", aci.Action{Argv: []string{"xdotool", "exec", "rm", "x"}}, true},
		{"xdotool chain exec", aci.Action{Shell: ptr(`xdotool key a exec --sync rm x`)}, true},
		{"xdotool script", aci.Action{Argv: []string{"xdotool", "./keys"}}, true},
		{"xdotool stdin", aci.Action{Shell: ptr(`echo 'exec rm x' | xdotool -`)}, true},
		{"xdotool key", aci.Action{Shell: ptr(`xdotool key ctrl+c`)}, false},
		{"xdotool search", aci.Action{Shell: ptr(`xdotool search --name Notes windowactivate --sync`)}, false},
		{"command -v", aci.Action{Shell: ptr(`command -v rm`)}, false},
		{"type", aci.Action{Shell: ptr(`type rm`)}, false},
		{"echo", aci.Action{Shell: ptr(`echo rm`)}, false},
		{"a write to a compound", aci.Action{Shell: ptr(`{ :; } > x`)}, true},
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
			if in.Dynamic != tt.dynamic {
				t.Errorf("dynamic %v, want %v: %+v", in.Dynamic, tt.dynamic, in.Commands)
			}
		})
	}
}

// TestRequestShowsWhatIsRead: commands that only look a name up run no
// program of that name; command runs the one it names; the redirections
// of each command and the exec's stdin are shown, stdin cut at
// MaxStdinShown; the exec's env is on every command of a line.
func TestRequestShowsWhatIsRead(t *testing.T) {
	rm, err := filepath.EvalSymlinks("/bin/rm")
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, a aci.Action) protocol.CommandInput {
		t.Helper()
		req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &a}, "r")
		if err != nil {
			t.Fatal(err)
		}
		in, err := req.Command()
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	runsRm := func(in protocol.CommandInput) bool {
		for _, c := range in.Commands {
			if c.Program == rm {
				return true
			}
		}
		return false
	}
	for _, line := range []string{"command -v rm", "command -V rm", "type rm", "echo rm", "printf rm"} {
		if in := read(t, aci.Action{Shell: &line}); runsRm(in) {
			t.Errorf("%q runs rm: %+v", line, in.Commands)
		}
	}
	if in := read(t, aci.Action{Shell: ptr("command rm x")}); !runsRm(in) {
		t.Errorf("command rm x runs no rm: %+v", in.Commands)
	}

	in := read(t, aci.Action{Shell: ptr(`echo hi > out 2>&1; wc -l < f; : >> log`), Env: map[string]string{"CI": "1"}})
	want := [][]protocol.Redirect{
		{{Op: ">", Target: "out"}, {Op: ">&", FD: "2", Target: "1"}},
		{{Op: "<", Target: "f"}},
		{{Op: ">>", Target: "log"}},
	}
	if len(in.Commands) != len(want) {
		t.Fatalf("commands %+v", in.Commands)
	}
	for i, c := range in.Commands {
		if !reflect.DeepEqual(c.Redirects, want[i]) {
			t.Errorf("%q: redirects %+v, want %+v", c.Argv, c.Redirects, want[i])
		}
		if c.Env["CI"] != "1" {
			t.Errorf("%q: env %v, want the exec's", c.Argv, c.Env)
		}
	}

	in = read(t, aci.Action{Argv: []string{"cat"}, Stdin: ptr("rm x\n")})
	if in.Stdin != "rm x\n" || in.StdinCut {
		t.Errorf("stdin %q cut %v", in.Stdin, in.StdinCut)
	}
	long := strings.Repeat("é", protocol.MaxStdinShown) // two bytes each
	in = read(t, aci.Action{Argv: []string{"cat"}, Stdin: &long})
	if !in.StdinCut || len(in.Stdin) > protocol.MaxStdinShown || !strings.HasPrefix(long, in.Stdin) || !utf8.ValidString(in.Stdin) {
		t.Errorf("a long stdin: %d bytes shown, cut %v", len(in.Stdin), in.StdinCut)
	}
}
