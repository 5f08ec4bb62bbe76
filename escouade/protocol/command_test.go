package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCommandKeysAsWritten: a request's input is read with its keys as
// written, so that what a guard reads through Command is what the input's
// own keys say ("Argv" is not argv, as encoding/json would take it).
func TestCommandKeysAsWritten(t *testing.T) {
	r := &PermissionRequest{Kind: KindCommand, Input: map[string]any{
		"command": "ls", "Argv": []any{"rm", "-rf", "/"}, "later": 1,
	}}
	in, err := r.Command()
	if err != nil {
		t.Fatal(err)
	}
	if in.Command != "ls" || in.Argv != nil {
		t.Errorf("Command() = %q %q, want the input's own command and no argv", in.Command, in.Argv)
	}
}

// TestCommandMapRoundTrip: every field of CommandInput goes through Map
// and comes back the same through Command, the gate's view included
// (program_id, commands with their redirects and env, stdin, stdin_cut,
// interactive), so that the two stay in step.
func TestCommandMapRoundTrip(t *testing.T) {
	id := &FileID{Dev: 2049, Ino: 1 << 40, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	in := CommandInput{
		Command: "PATH=/x git status > out 2>&1", Argv: []string{"/bin/sh", "-c", "PATH=/x git status > out 2>&1"},
		Cwd: "/repo", Env: map[string]string{"CI": "1"}, Program: "/usr/bin/dash", ProgramID: id,
		Commands: []SimpleCommand{
			{Argv: []string{"git", "status"}, Env: map[string]string{"PATH": "/x"}, Program: "/x/git", ProgramID: id,
				Redirects: []Redirect{{Op: ">", Target: "out"}, {Op: ">&", FD: "2", Target: "1"}}},
			{Argv: []string{}, Redirects: []Redirect{{Op: "<<", Target: "text\n"}}},
		},
		Dynamic: true, Stdin: "rm x\n", StdinCut: true, Interactive: true,
	}
	r := &PermissionRequest{Kind: KindCommand, Input: in.Map()}
	back, err := r.Command()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("round trip\n got %+v\nwant %+v", back, in)
	}
	// Through the wire too: the request as JSON, decoded.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var wire PermissionRequest
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	if back, err = wire.Command(); err != nil || !reflect.DeepEqual(back, in) {
		t.Errorf("through JSON: %v\n got %+v\nwant %+v", err, back, in)
	}
}
