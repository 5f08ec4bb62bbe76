package gate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/escouade/gate/gatetest"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// allowedPrograms are what the reference guard allows: a realistic
// agent's tools, by the identity of the files their names find here.
var allowedPrograms = []string{"ls", "cat", "grep", "find", "git", "python3", "make", "echo", "sed", "head",
	"tail", "wc", "sort", "printf", "true", "test"}

// allowedBuiltins are the shell's builtins the reference guard allows.
// command and type look a name up, and what command runs is shown as a
// command of its own.
var allowedBuiltins = []string{"echo", "printf", "true", "false", "test", "[", ":", "command", "type"}

// referenceGuard is the allowlist the run-for-real corpus is judged by:
// programs by identity (SHA-256 and device and inode), a few builtins,
// argument rules for the programs that write or delete (find, git, sort),
// write redirections only into the case's scratch folder, symlinks
// resolved, and every dynamic request refused.
type referenceGuard struct {
	byHash map[string]string // SHA-256 → name
}

func newReferenceGuard(t *testing.T) *referenceGuard {
	citest.NeedPrograms(t, allowedPrograms...)
	g := &referenceGuard{byHash: map[string]string{}}
	for _, name := range allowedPrograms {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		g.byHash[hex.EncodeToString(h.Sum(nil))] = name
	}
	return g
}

func (g *referenceGuard) judge(req protocol.PermissionRequest) bool {
	in, err := req.Command()
	if err != nil || in.Dynamic || in.Interactive || in.Commands == nil || in.Cwd == "" {
		return false
	}
	for _, c := range in.Commands {
		if !g.command(c, in.Cwd) {
			return false
		}
	}
	return true
}

func (g *referenceGuard) command(c protocol.SimpleCommand, cwd string) bool {
	for _, r := range c.Redirects {
		if !writeAllowed(r, cwd) {
			return false
		}
	}
	if len(c.Argv) == 0 {
		return true // redirections alone
	}
	if c.Program == "" {
		return slices.Contains(allowedBuiltins, c.Argv[0])
	}
	if c.ProgramID == nil {
		return false
	}
	name, ok := g.byHash[c.ProgramID.SHA256]
	if !ok {
		return false
	}
	if fi, err := os.Stat(c.Program); err != nil || !sameFile(fi, c.ProgramID) {
		return false
	}
	args := c.Argv[1:]
	switch name {
	case "find":
		for _, a := range args {
			if a == "-delete" || strings.HasPrefix(a, "-fprint") || a == "-fls" {
				return false
			}
		}
	case "git":
		if len(args) == 0 || !slices.Contains([]string{"status", "log", "diff", "show", "ls-files", "rev-parse", "--version"}, args[0]) {
			return false
		}
		for _, a := range args {
			if strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "--ext") {
				return false
			}
		}
	case "sort":
		for _, a := range args {
			if strings.HasPrefix(a, "--o") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "o")) {
				return false
			}
		}
	}
	return true
}

// writeAllowed: a redirection that may write goes into scratch, symlinks
// resolved.
func writeAllowed(r protocol.Redirect, cwd string) bool {
	switch r.Op {
	case "<", "<<", "<<-", "<<<", "<&":
		return true
	case ">&":
		if strings.Trim(r.Target, "0123456789-") == "" && r.Target != "" {
			return true
		}
	}
	t := r.Target
	if !filepath.IsAbs(t) {
		t = filepath.Join(cwd, t)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(t))
	if err != nil {
		return false
	}
	t = filepath.Join(dir, filepath.Base(t))
	if fi, err := os.Lstat(t); err == nil && !fi.Mode().IsRegular() {
		return false // a link, a device, a folder
	}
	scratch := filepath.Join(cwd, "scratch")
	if real, err := filepath.EvalSymlinks(scratch); err == nil {
		scratch = real
	}
	return strings.HasPrefix(t, scratch+string(filepath.Separator))
}

// runOsexec runs an exec for real through the osexec backend.
func runOsexec(e *osexec.Executor) gatetest.Exec {
	return func(ctx context.Context, req aci.ExecRequest) (int, error) {
		p, err := e.Start(ctx, req)
		if err != nil {
			return 0, err
		}
		out, err := shinken.Collect(p, 1<<20)
		if err != nil {
			return 0, err
		}
		return out.Status.Code, nil
	}
}

// TestHostileCorpusHeld: no line of testdata/hostile that the reference
// allowlist guard allows touches its victim when run for real through
// osexec, beside a set of benign lines that it allows and that run.
func TestHostileCorpusHeld(t *testing.T) {
	g := newReferenceGuard(t)
	run := runOsexec(osexec.New(nil))
	t.Run("hostile", func(t *testing.T) { gatetest.Hostile(t, "testdata/hostile", g.judge, run) })
	t.Run("benign", func(t *testing.T) { gatetest.Benign(t, "testdata/benign", g.judge, run) })
}

// TestHostileCorpusBites: every line of testdata/hostile deletes or
// empties its victim when nothing judges it (a line marked root, when run
// as root), so that TestHostileCorpusHeld holds for the guard, not for
// lines that harm nothing.
func TestHostileCorpusBites(t *testing.T) {
	cases, err := gatetest.Read("testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	run := runOsexec(osexec.New(nil))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Root && os.Geteuid() != 0 {
				t.Skip("this line bites only as root")
			}
			t.Parallel()
			o := gatetest.Run(t, c, nil, run)
			if gatetest.Intact(o.Dir) {
				t.Errorf("the victim is intact (ran: %v, code %d, err %v)", o.Ran, o.Code, o.Err)
			}
		})
	}
}

// sameFile reports whether fi is the file id names, by device and inode.
func sameFile(fi os.FileInfo, id *protocol.FileID) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == id.Dev && uint64(st.Ino) == id.Ino
}
