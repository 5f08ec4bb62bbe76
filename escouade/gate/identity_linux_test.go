package gate_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestRequestProgramIdentity: program is the real file, symlinks
// resolved, with the device, inode and SHA-256 of its contents; a copy
// of a program under another name is known by its contents (a copy of
// env runs what env runs).
func TestRequestProgramIdentity(t *testing.T) {
	dir := t.TempDir()
	env, err := filepath.EvalSymlinks("/usr/bin/env")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "lister")
	if err := os.WriteFile(copied, b, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(copied, link); err != nil {
		t.Fatal(err)
	}
	req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &aci.Action{Argv: []string{link, "-S", "rm x"}}}, "r")
	if err != nil {
		t.Fatal(err)
	}
	in, err := req.Command()
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(copied)
	if in.Program != real || in.ProgramID == nil {
		t.Fatalf("program %q id %v, want %q", in.Program, in.ProgramID, real)
	}
	fi, err := os.Stat(real)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if in.ProgramID.SHA256 != hex.EncodeToString(sum[:]) || !sameFile(fi, in.ProgramID) {
		t.Errorf("identity %+v", in.ProgramID)
	}
	if !in.Dynamic {
		t.Errorf("a copy of env with -S is not dynamic")
	}
}
