package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/internal/agentuser"
	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// agentDesktop is a daemon serving its own X session (-session) with
// -agent-user, a token file and a plugin, as a deployment runs it.
type agentDesktop struct {
	*running
	user    *agentuser.User
	token   string // the token file
	plugins string // the plugins folder
	c       *client.Client
}

// startAgentDesktop starts the daemon as root on an X session of its own,
// with the agent's user, the extra environment and the extra flags, and
// dials it once it is ready.
func startAgentDesktop(t *testing.T, ctx context.Context, env []string, extra ...string) *agentDesktop {
	t.Helper()
	u := agentusertest.Need(t)
	citest.NeedPrograms(t, "Xvfb", "openbox", "dbus-daemon", "zenity", "gtk3-demo", "chromium")
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755) // the agent may look in, as into /etc/shinken
	}
	bin := build(t, dir, ".", "example")
	plugins := filepath.Join(dir, "plugins")
	pdir := filepath.Join(plugins, "policy")
	os.MkdirAll(pdir, 0o755)
	build(t, pdir, "./testdata/policy", "policy")
	manifest, _ := os.ReadFile("testdata/policy/plugin.json")
	os.WriteFile(filepath.Join(pdir, "plugin.json"), manifest, 0o644)
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte(boundaryToken+"\n"), 0o600)

	cmd := exec.Command(bin, "-no-guard", "-listen", "127.0.0.1:0", "-token-file", token, "-plugins", plugins, "-project", "demo",
		"-backend", "x11", "-session", "-size", "1024x768", "-agent-user", u.Name, "-require-agent-user")
	cmd.Args = append(cmd.Args, extra...)
	cmd.Env = append(os.Environ(), env...)
	d := startCmd(t, cmd)
	d.awaitReady(t, 200, 2*time.Minute)
	c, err := client.Dial(ctx, d.aci, &client.DialOptions{Token: boundaryToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &agentDesktop{running: d, user: u, token: token, plugins: plugins, c: c}
}

// launched waits until a process running program, started by the daemon,
// is up, and returns its id: Launch returns once the app is started, and
// the process is the daemon's child from then on.
func (a *agentDesktop) launched(t *testing.T, program string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, pid := range descendants(t, a.cmd.Process.Pid) {
			if exe, err := os.Readlink(procfs.Root + "/" + strconv.Itoa(pid) + "/exe"); err == nil && filepath.Base(exe) == program {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process of %s among the daemon's", program)
		}
		time.Sleep(20 * time.Millisecond) // polling /proc: no event says a process started
	}
}

// gone waits until process pid has ended (or is a zombie no one reaps).
func gone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for procfs.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs", what, pid)
		}
		time.Sleep(20 * time.Millisecond) // polling /proc: nothing to wait on for a process not ours
	}
}

// environ is process pid's environment, as it started.
func environ(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(procfs.Root + "/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	return env
}

// TestAgentAppsX11 launches zenity and gtk3-demo through a daemon with
// -session and -agent-user: each runs as the agent's user, with its own
// HOME, cookie copy and runtime folder and no token, no terminal; its
// tree shows in observe, and a click and typing reach it (zenity prints
// ends on Return). A program the agent launches cannot read the token,
// write the plugins folder or signal the daemon. The session's end ends
// the apps.
func TestAgentAppsX11(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a := startAgentDesktop(t, ctx, nil)
	u, c := a.user, a.c

	if err := c.LaunchApp(ctx, "zenity", "--entry", "--title", "Agent's app", "--text", "Your name?"); err != nil {
		t.Fatal(err)
	}
	zenity := a.launched(t, "zenity")
	if owner(zenity) != u.UID {
		t.Errorf("zenity runs as uid %d, want the agent's %d", owner(zenity), u.UID)
	}
	if tty := ttyOf(t, zenity); tty != 0 {
		t.Errorf("zenity holds terminal %d", tty)
	}
	env := environ(t, zenity)
	if env["HOME"] != u.Home || env["USER"] != u.Name || env["LOGNAME"] != u.Name {
		t.Errorf("zenity's HOME, USER, LOGNAME: %q %q %q, want the agent's", env["HOME"], env["USER"], env["LOGNAME"])
	}
	for _, k := range []string{"XAUTHORITY", "XDG_RUNTIME_DIR"} {
		fi, err := os.Stat(env[k])
		if err != nil || fi.Sys().(*syscall.Stat_t).Uid != u.UID {
			t.Errorf("zenity's %s %q is not the agent's own (%v)", k, env[k], err)
		}
	}
	for k, v := range env {
		if strings.Contains(v, boundaryToken) {
			t.Errorf("zenity's %s holds the token", k)
		}
	}

	entry, err := c.WaitFor(ctx, client.WaitForRequest{Role: "text", Timeout: 30 * time.Second, Desktop: true})
	if err != nil {
		t.Fatalf("zenity's entry never showed in the tree: %v", err)
	}
	if err := c.Click(ctx, aci.Ref(entry.Ref)); err != nil {
		t.Fatal(err)
	}
	if err := c.TypeText(ctx, "agent ✓"); err != nil {
		t.Fatal(err)
	}
	obs, err := c.Observe(ctx, &client.ObserveRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var typed bool
	for _, el := range obs.Elements {
		typed = typed || el.Role == "text" && el.Value == "agent ✓"
	}
	if !typed {
		t.Errorf("the entry does not hold what was typed: %+v", obs.Elements)
	}
	// Return reaches it too: zenity ends.
	if err := c.Key(ctx, "Return"); err != nil {
		t.Fatal(err)
	}
	gone(t, zenity, "zenity after Return")

	if err := c.LaunchApp(ctx, "gtk3-demo"); err != nil {
		t.Fatal(err)
	}
	demo := a.launched(t, "gtk3-demo")
	if owner(demo) != u.UID {
		t.Errorf("gtk3-demo runs as uid %d, want the agent's %d", owner(demo), u.UID)
	}
	// gtk3-demo's list of demos: a tree with the demos' names.
	if _, err := c.WaitFor(ctx, client.WaitForRequest{Name: "Application Class", Timeout: 30 * time.Second, Desktop: true}); err != nil {
		t.Fatalf("gtk3-demo's demos never showed in the tree: %v", err)
	}

	// What the agent launches tries the daemon's files and the daemon.
	probe := filepath.Join(u.Home, "shinken-probe")
	os.Remove(probe)
	script := fmt.Sprintf(`exec >%s 2>&1
cat %s && echo READ-TOKEN
touch %s/evil && echo WROTE-PLUGINS
kill -0 %d && echo SIGNALLED
echo done`, probe, a.token, a.plugins, a.cmd.Process.Pid)
	if err := c.LaunchApp(ctx, "/bin/sh", "-c", script); err != nil {
		t.Fatal(err)
	}
	var out []byte
	deadline := time.Now().Add(20 * time.Second)
	for !bytes.HasSuffix(out, []byte("done\n")) {
		if time.Now().After(deadline) {
			t.Fatalf("the launched script did not finish: %q", out)
		}
		time.Sleep(20 * time.Millisecond) // polling its output file: the script is not ours to wait on
		out, _ = os.ReadFile(probe)
	}
	os.Remove(probe)
	for _, leak := range []string{"READ-TOKEN", "WROTE-PLUGINS", "SIGNALLED", boundaryToken} {
		if bytes.Contains(out, []byte(leak)) {
			t.Errorf("a launched program got through: %s\n%s", leak, out)
		}
	}
	if n := bytes.Count(out, []byte("ermission denied")) + bytes.Count(out, []byte("not permitted")); n != 3 {
		t.Errorf("%d refusals, want 3:\n%s", n, out)
	}

	c.Close()
	a.stop(t)
	gone(t, demo, "gtk3-demo")
}

// TestAgentAppsEndWithKilledDaemon: a daemon killed outright (SIGKILL)
// takes the apps it launched as the agent's user with it: the X server
// goes on its parent-death signal, and its clients with it; Chromium, which
// outlives its X server, ends on its own parent-death signal. A startup
// app (-app) runs as the agent's user too, and ends with the X server.
func TestAgentAppsEndWithKilledDaemon(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The killed daemon leaves its session's folder: in the test's, which
	// the apps use as /tmp (Chromium keeps its singleton socket there).
	tmp := t.TempDir()
	os.Chmod(tmp, 0o1777)
	a := startAgentDesktop(t, ctx, []string{"TMPDIR=" + tmp}, "-app", "gtk3-demo")
	demo := a.launched(t, "gtk3-demo")
	if owner(demo) != a.user.UID {
		t.Errorf("the startup app runs as uid %d, want the agent's %d", owner(demo), a.user.UID)
	}
	if err := a.c.LaunchApp(ctx, "zenity", "--info", "--text", "left behind?"); err != nil {
		t.Fatal(err)
	}
	zenity := a.launched(t, "zenity")
	if owner(zenity) != a.user.UID {
		t.Fatalf("zenity runs as uid %d, want the agent's %d", owner(zenity), a.user.UID)
	}
	// Its window is up: it is a client of the display, not a process
	// still starting.
	if _, err := a.c.WaitFor(ctx, client.WaitForRequest{Name: "left behind?", Timeout: 30 * time.Second, Desktop: true}); err != nil {
		t.Fatalf("zenity never showed in the tree: %v", err)
	}
	// Chromium outlives its X server: the parent-death signal ends it,
	// and its own processes follow their parent.
	profile := filepath.Join(a.user.Home, fmt.Sprintf("shinken-chromium-killed-%d", os.Getpid()))
	t.Cleanup(func() { os.RemoveAll(profile) })
	argv := chromiumArgs(t, profile, `data:text/html,<button>Left behind?</button>`)
	if err := a.c.LaunchApp(ctx, argv[0], argv[1:]...); err != nil {
		t.Fatal(err)
	}
	browser := a.launched(t, "chromium")
	// Its window is up: its processes are started.
	for deadline := time.Now().Add(60 * time.Second); ; {
		windows, err := a.c.ListWindows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(windows, func(w aci.WindowInfo) bool { return w.PID == browser }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no window of chromium (pid %d) among %+v", browser, windows)
		}
		time.Sleep(50 * time.Millisecond) // polling the window list: no event reaches the client
	}
	family := append([]int{browser}, descendants(t, browser)...)
	a.cmd.Process.Kill()
	gone(t, zenity, "zenity after the daemon's SIGKILL")
	gone(t, demo, "the startup app after the daemon's SIGKILL")
	for _, pid := range family {
		gone(t, pid, "chromium's process after the daemon's SIGKILL")
	}
}

// TestAgentChromiumX11: Chromium launched through the daemon as the
// agent's user shows its page's tree, and a click by ref on the page's
// button runs the page's script.
func TestAgentChromiumX11(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a := startAgentDesktop(t, ctx, nil)
	profile := filepath.Join(a.user.Home, fmt.Sprintf("shinken-chromium-%d", os.Getpid()))
	t.Cleanup(func() { os.RemoveAll(profile) })
	page := `data:text/html,<title>Agent page</title><button onclick="document.title='clicked by the agent'">Go</button>`
	argv := chromiumArgs(t, profile, page)
	if err := a.c.LaunchApp(ctx, argv[0], argv[1:]...); err != nil {
		t.Fatal(err)
	}
	pid := a.launched(t, "chromium")
	if owner(pid) != a.user.UID {
		t.Errorf("chromium runs as uid %d, want the agent's %d", owner(pid), a.user.UID)
	}
	button, err := a.c.WaitFor(ctx, client.WaitForRequest{Role: "push button", Name: "Go", Timeout: 60 * time.Second, Desktop: true})
	if err != nil {
		t.Fatalf("the page's button never showed in the tree: %v", err)
	}
	if err := a.c.Click(ctx, aci.Ref(button.Ref)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.WaitFor(ctx, client.WaitForRequest{Name: "clicked by the agent", Timeout: 20 * time.Second, Desktop: true}); err != nil {
		t.Fatalf("the click did not reach the page: %v", err)
	}
	a.c.Close()
	a.stop(t)
	gone(t, pid, "chromium")
}

// chromiumArgs is the launch_app argv of Chromium showing page, with its
// profile in the agent's folder profile.
func chromiumArgs(t *testing.T, profile, page string) []string {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(err)
	}
	return []string{chromium, "--no-sandbox", "--no-first-run", "--no-default-browser-check",
		"--disable-gpu", "--force-renderer-accessibility", "--password-store=basic",
		"--disable-features=Translate,MediaRouter", "--user-data-dir=" + profile,
		"--window-position=0,0", "--window-size=900,700", page}
}
