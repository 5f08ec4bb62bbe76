package machine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken/aci"
)

// TestCommandFolderPlanted: a command's read and control are not judged
// (they run nothing the agent chose), so a folder an agent planted with
// the handle's shape, its output a link to a file the guard would refuse,
// must read nothing through the link.
func TestCommandFolderPlanted(t *testing.T) {
	c, _ := execRig(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("TOPSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.TempDir(), "shinken-cmd.PLANTed1")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, body := range map[string]string{"hpid": "1 1\n", "chunk": "65536\n", "mode": "line\n", "cmd": "true\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(dir, "o.0000")); err != nil {
		t.Fatal(err)
	}
	res, err := c.Exec(t.Context(), &aci.ExecRequest{Argv: hosttool.CommandRead.Argv(dir, "0", "100")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout+res.Stderr, "TOPSECRET") {
		t.Fatalf("a planted folder's link was read: %q", res.Stdout)
	}
	if res.ExitCode == nil || *res.ExitCode != 3 {
		t.Fatalf("a planted folder: exit %v, stderr %q; want 3, no such command", res.ExitCode, res.Stderr)
	}
}
