package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// TestUnprivilegedDaemonProc runs the daemon as an unprivileged user with
// no agent user of its own, where the agent's commands share the daemon's
// user: each command runs in a user namespace of its own (with its pid
// namespace), so it can neither read the daemon's start-up environment
// nor open its memory through /proc, though the uid is the same; it can
// read its own.
func TestUnprivilegedDaemonProc(t *testing.T) {
	u := agentusertest.Need(t)
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	bin := build(t, dir, ".", "example")
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte(boundaryToken+"\n"), 0o600)
	os.Chown(token, int(u.UID), int(u.GID))

	cmd := exec.Command(bin, "-no-guard", "-listen", "127.0.0.1:0", "-token-file", token)
	cmd.Env = append(os.Environ(), "HOME="+u.Home)
	cmd.Dir = u.Home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID}}
	d := startCmd(t, cmd)
	d.awaitReady(t, 200, 2*time.Minute)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	proxy := schematest.NewProxy(t, strings.TrimSuffix(d.aci, "/aci"))
	c, err := client.Dial(ctx, proxy.URL+"/aci", &client.DialOptions{Token: boundaryToken})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	probe := func(p string) string {
		t.Helper()
		res, err := c.Exec(ctx, &aci.ExecRequest{Shell: "id -u; cat " + p + "/environ >/dev/null && echo environ; (exec 3<>" + p + "/mem) && echo mem; true"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Stdout
	}
	uid := strconv.Itoa(int(u.UID)) + "\n"
	if got := probe("/proc/self"); got != uid+"environ\nmem\n" {
		t.Fatalf("a command's own /proc: %q; want its environ read and its mem opened (the probe itself fails)", got)
	}
	if got := probe("/proc/" + strconv.Itoa(cmd.Process.Pid)); got != uid {
		t.Errorf("the daemon's /proc, from a command of the daemon's own user: %q; want neither its environ nor its mem", got)
	}
}
