package session

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"shinken.dev/go/internal/agentusertest"
)

// TestProcCredential: a relaunched application keeps who it was. A
// process of this user needs no credential; one of the agent's user
// comes back with its uid, gid and groups.
func TestProcCredential(t *testing.T) {
	if c, err := procCredential(os.Getpid()); err != nil || c != nil {
		t.Fatalf("this process: %+v, %v; want nil, nil", c, err)
	}
	u := agentusertest.Need(t)
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.Credential()}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	c, err := procCredential(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.Uid != u.UID || c.Gid != u.GID || len(c.Groups) != len(u.Groups) {
		t.Fatalf("credential %+v, want the agent's %d:%d %v", c, u.UID, u.GID, u.Groups)
	}
}
