package osexec_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/shinken/aci"
)

// agentExecutor is an executor whose commands run as the test user.
func agentExecutor(t *testing.T) (*osexec.Executor, *osexec.User) {
	t.Helper()
	u := agentusertest.Need(t)
	ou := &osexec.User{Name: u.Name, UID: u.UID, GID: u.GID, Groups: u.Groups, Home: u.Home}
	return osexec.New(&osexec.Options{User: ou, Env: []string{"PATH=/usr/bin:/bin", "HOME=/root", "USER=root"}}), ou
}

// TestUser: a command runs with the user's ids and no other group, HOME,
// USER and LOGNAME are the user's whatever the base environment says, and
// a request with no Dir starts in the user's home.
func TestUser(t *testing.T) {
	e, u := agentExecutor(t)
	out := run(t, e, aci.ExecRequest{Shell: `id -u; id -g; id -G; echo "$HOME $USER $LOGNAME"; pwd`})
	if out.Status.Code != 0 {
		t.Fatalf("exit %d: %s", out.Status.Code, out.Stderr)
	}
	groups := []string{strconv.Itoa(int(u.GID))}
	for _, g := range u.Groups {
		groups = append(groups, strconv.Itoa(int(g)))
	}
	want := strings.Join([]string{
		strconv.Itoa(int(u.UID)), strconv.Itoa(int(u.GID)), strings.Join(groups, " "),
		u.Home + " " + u.Name + " " + u.Name, u.Home,
	}, "\n") + "\n"
	if got := string(out.Stdout); got != want {
		t.Errorf("as %s:\n%s\nwant\n%s", u.Name, got, want)
	}
	if got := string(run(t, e, aci.ExecRequest{Argv: []string{"pwd"}, Dir: "/usr"}).Stdout); got != "/usr\n" {
		t.Errorf("Dir /usr: pwd says %q", got)
	}
}

// TestUserCannotSignalTheRuntime: a command of another user cannot signal
// the process that started it (kill -0 fails with EPERM, or with ESRCH
// from inside its pid namespace), nor read its environment or memory.
func TestUserCannotSignalTheRuntime(t *testing.T) {
	e, _ := agentExecutor(t)
	pid := strconv.Itoa(os.Getpid())
	for _, c := range []string{
		"kill -0 " + pid,
		"cat /proc/" + pid + "/environ",
		"head -c1 /proc/" + pid + "/mem",
	} {
		out := run(t, e, aci.ExecRequest{Shell: c + " 2>&1"})
		if out.Status.Code == 0 {
			t.Errorf("%s: succeeded as the other user: %q", c, out.Stdout)
		}
		// Inside its pid namespace a command cannot even name the
		// runtime: kill finds no such process, which holds as well.
		if msg := string(out.Stdout); !strings.Contains(msg, "ermission denied") && !strings.Contains(msg, "not permitted") && !strings.Contains(msg, "No such process") {
			t.Errorf("%s: %q, want a permission error", c, msg)
		}
	}
}

// TestUserKilledAtDeadline: the runtime still kills a command of another
// user at its deadline (it holds CAP_KILL), and the whole group with it.
func TestUserKilledAtDeadline(t *testing.T) {
	e, _ := agentExecutor(t)
	p := start(t, e, aci.ExecRequest{Shell: "sleep 600 & sleep 600", Timeout: time.Second})
	st, err := p.Wait()
	if err != nil || !st.TimedOut || st.Signal != 9 {
		t.Fatalf("status %+v, %v: want a deadline kill", st, err)
	}
}
