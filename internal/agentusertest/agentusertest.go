// Package agentusertest gives a test a real second user to run the agent's
// commands as: it is created (useradd) when the test runs as root and it
// does not exist yet; elsewhere the test is skipped, and under CI failed
// (scripts/test runs as root and creates it).
package agentusertest

import (
	"os"
	"os/exec"
	"testing"

	"shinken.dev/go/internal/agentuser"
	"shinken.dev/go/internal/citest"
)

// Name is the test user's login name.
const Name = "shinken-agent"

// Need returns the test user, creating it if need be, after checking that
// this process can start commands as it.
func Need(t testing.TB) *agentuser.User {
	t.Helper()
	u, err := agentuser.Lookup(Name)
	if err != nil {
		if os.Geteuid() != 0 {
			citest.Skip(t, "no user %s, and not root to create it: %v", Name, err)
		}
		citest.NeedPrograms(t, "useradd")
		out, uerr := exec.Command("useradd", "--create-home", "--shell", "/bin/sh", Name).CombinedOutput()
		// Another test package may have created it meanwhile: look again.
		if u, err = agentuser.Lookup(Name); err != nil {
			t.Fatalf("useradd %s: %v %s; lookup: %v", Name, uerr, out, err)
		}
	}
	if err := u.CanSwitch(); err != nil {
		citest.Skip(t, "cannot run commands as %s: %v", Name, err)
	}
	return u
}
