package guard_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// tool is the gate's request for a machine tool's intent.
func tool(t *testing.T, in shinken.Intent) protocol.PermissionRequest {
	t.Helper()
	req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &aci.Action{Argv: []string{"/bin/sh"}}, Intent: &in}, "t")
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestFiles: the machine tools' reads and edits, judged by real path
// under the roots, protected files refused even inside them.
func TestFiles(t *testing.T) {
	s := newSandbox(t, &guard.Policy{Allow: []string{"ls", "make"}})
	ro := filepath.Join(s.dir, "docs")
	os.Mkdir(ro, 0o755)
	g, err := guard.New(&guard.Policy{Allow: []string{"ls", "make"}, Read: []string{ro}, Write: []string{s.work}})
	if err != nil {
		t.Fatal(err)
	}
	// A link inside the root to the victim outside it, a link to the root's
	// parent, and a folder that does not exist yet.
	os.Symlink(s.victim, filepath.Join(s.work, "tovictim"))
	os.Symlink(s.dir, filepath.Join(s.work, "up"))
	os.Symlink(filepath.Join(s.dir, "nowhere"), filepath.Join(s.work, "dangling"))
	os.MkdirAll(filepath.Join(s.dir, "deep", "sub"), 0o755)
	os.Symlink(filepath.Join(s.dir, "deep", "sub"), filepath.Join(s.work, "d"))
	w := s.work
	tests := []struct {
		name string
		in   shinken.Intent
		want protocol.Verdict
	}{
		{"read in the write root", shinken.Intent{Tool: "read_file", Kind: "read", Path: w + "/notes.txt"}, protocol.Allow},
		{"read in the read root", shinken.Intent{Tool: "list_files", Kind: "read", Path: ro}, protocol.Allow},
		{"write a new file", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/new/deep/file.go"}, protocol.Allow},
		{"move inside", shinken.Intent{Tool: "move", Kind: "edit", Path: w + "/notes.txt", To: w + "/n.txt"}, protocol.Allow},
		{"delete a link itself", shinken.Intent{Tool: "delete", Kind: "edit", Path: w + "/up/work/notes.txt"}, protocol.Allow},

		{"read outside", shinken.Intent{Tool: "read_file", Kind: "read", Path: s.victim}, protocol.Deny},
		{"read by ..", shinken.Intent{Tool: "read_file", Kind: "read", Path: w + "/../victim"}, protocol.Deny},
		{"write in the read root", shinken.Intent{Tool: "write_file", Kind: "edit", Path: ro + "/x"}, protocol.Deny},
		{"write through a link", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/tovictim"}, protocol.Deny},
		{"write through a folder link", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/up/victim"}, protocol.Deny},
		{"write through a dangling link", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/dangling"}, protocol.Deny},
		{"a .. after a link", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/d/../../victim"}, protocol.Deny},
		{"a .. after a link, in the link's folder lexically", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/d/../x"}, protocol.Deny},
		{"a .. in a tail not made yet", shinken.Intent{Tool: "mkdir", Kind: "edit", Path: w + "/new/../../victim"}, protocol.Deny},
		{"move out", shinken.Intent{Tool: "move", Kind: "edit", Path: w + "/notes.txt", To: s.dir + "/out"}, protocol.Deny},
		{"move in over the victim", shinken.Intent{Tool: "move", Kind: "edit", Path: s.victim, To: w + "/v"}, protocol.Deny},
		{"delete the root", shinken.Intent{Tool: "delete", Kind: "edit", Path: w}, protocol.Deny},
		{"relative", shinken.Intent{Tool: "write_file", Kind: "edit", Path: "notes.txt"}, protocol.Deny},
		{".bashrc", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/.bashrc"}, protocol.Deny},
		{".git/config", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/repo/.git/config"}, protocol.Deny},
		{".git/hooks", shinken.Intent{Tool: "mkdir", Kind: "edit", Path: w + "/.git/hooks/pre-commit"}, protocol.Deny},
		{".git file", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/sub/.git"}, protocol.Deny},
		{".ssh", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/.ssh/authorized_keys"}, protocol.Deny},
		{"Makefile when make is allowed", shinken.Intent{Tool: "write_file", Kind: "edit", Path: w + "/Makefile"}, protocol.Deny},
		{"open", shinken.Intent{Tool: "open", Kind: "command", Argv: []string{"xdg-open", w + "/notes.txt"}}, protocol.Deny},
		{"shell start", shinken.Intent{Tool: "shell", Kind: "command", Argv: []string{"/bin/bash", "-i"}, Interactive: true}, protocol.Deny},
		{"a line typed into the shell", shinken.Intent{Tool: "shell", Kind: "command", Line: "ls -la"}, protocol.Allow},
		{"a hostile line typed into the shell", shinken.Intent{Tool: "shell", Kind: "command", Line: "rm " + s.victim}, protocol.Deny},
		{"a history expansion typed into the shell", shinken.Intent{Tool: "shell", Kind: "command", Line: "find . !$"}, protocol.Deny},
		{"a ! that expands nothing", shinken.Intent{Tool: "shell", Kind: "command", Line: "ls && ! ls nothing"}, protocol.Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := g.Judge(tool(t, tt.in))
			if d.Verdict != tt.want {
				t.Fatalf("%s, want %s", describe(d), tt.want)
			}
		})
	}
	// Interactive shells may be allowed where the runtime types a line only
	// at the shell's prompt, their lines judged one by one; text typed as
	// is (dynamic) is refused.
	if _, err := guard.New(&guard.Policy{Allow: []string{"ls"}, OnInteractive: protocol.Allow}); err == nil {
		t.Error("OnInteractive allow without TypedAtPrompt")
	}
	g2, err := guard.New(&guard.Policy{Allow: []string{"ls"}, OnInteractive: protocol.Allow, TypedAtPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		in   shinken.Intent
		want protocol.Verdict
	}{
		{"shell start", shinken.Intent{Tool: "shell", Kind: "command", Argv: []string{"/bin/sh"}, Interactive: true}, protocol.Allow},
		{"a line", shinken.Intent{Tool: "shell", Kind: "command", Line: "ls -la\n"}, protocol.Allow},
		{"a line typed as is", shinken.Intent{Tool: "shell", Kind: "command", Line: "ls -la\n", Dynamic: true}, protocol.Deny},
		{"a hostile line", shinken.Intent{Tool: "shell", Kind: "command", Line: "rm " + s.victim + "\n"}, protocol.Deny},
		{"a write to the shell's fifo", shinken.Intent{Tool: "shell", Kind: "command", Line: "echo rm x > /tmp/shinken-shell.AbCd1234/in\n"}, protocol.Deny},
	} {
		if d := g2.Judge(tool(t, tt.in)); d.Verdict != tt.want {
			t.Errorf("%s under OnInteractive allow: %s, want %s", tt.name, describe(d), tt.want)
		}
	}
	g3, err := guard.New(&guard.Policy{Allow: []string{"echo"}, Write: []string{s.dir}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"shinken-shell.AbCd1234/in", "shinken-cmd.AbCd1234/in"} {
		if d := g3.Judge(tool(t, shinken.Intent{Tool: "write_file", Kind: "edit", Path: filepath.Join(s.dir, f)})); d.Verdict != protocol.Deny {
			t.Errorf("a write to %s: %s", f, describe(d))
		}
	}
}

// TestNew: a Policy that cannot hold is refused when the Guard is made.
func TestNew(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o755)
	for name, p := range map[string]*guard.Policy{
		"unknown program":     {Allow: []string{"no-such-program-anywhere"}},
		"relative program":    {Allow: []string{"bin/ls"}},
		"program in a root":   {Allow: []string{filepath.Join(dir, "tool")}, Write: []string{dir}},
		"relative root":       {Write: []string{"work"}},
		"missing root":        {Read: []string{filepath.Join(dir, "none")}},
		"bad dynamic verdict": {OnDynamic: protocol.Allow},
		"bad pattern":         {Protected: []string{"["}},
	} {
		if _, err := guard.New(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	g, err := guard.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Judge(protocol.PermissionRequest{ID: "x", Kind: "fetch", Input: map[string]any{"url": "https://example.com"}}); d.Verdict != protocol.Deny {
		t.Errorf("fetch: %s", describe(d))
	}
}

// TestProgramNotAFile: a program named by a FIFO or a pipe is refused at
// once, never opened to wait for a writer nor read.
func TestProgramNotAFile(t *testing.T) {
	s := newSandbox(t, nil)
	fifo := filepath.Join(s.dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fifo, "/proc/self/fd/0"} {
		req := request(t, argv(s.work, "ls"))
		in, err := req.Command()
		if err != nil {
			t.Fatal(err)
		}
		in.Program, in.Commands[0].Program = name, name
		in.ProgramID, in.Commands[0].ProgramID = nil, nil // a gate that shows no identity
		req.Input = in.Map()
		if d := s.g.Judge(req); d.Verdict != protocol.Deny {
			t.Errorf("%s: %s", name, describe(d))
		}
	}
}
