package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/daemon"

	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// need fails (under CI=true) or skips the test when a program is missing.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (CI=true: X tests must run)", p)
			}
			t.Skipf("skipping: %s is not installed", p)
		}
	}
}

// children returns the pids of pid's children, by their argv[0]'s base name
// (one of each).
func children(t *testing.T, pid int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, pids := range childrenByName(pid) {
		out[name] = pids[0]
	}
	return out
}

// countChildren counts pid's live children whose argv[0]'s base name is name.
func countChildren(t *testing.T, pid int, name string) int {
	t.Helper()
	return len(childrenByName(pid)[name])
}

// childrenByName returns the pids of pid's live children by argv[0]'s base name.
func childrenByName(pid int) map[string][]int {
	all, _ := procfs.All()
	out := map[string][]int{}
	for _, p := range all {
		if p.PPID == pid && p.Live() {
			name := argv0(p.PID)
			out[name] = append(out[name], p.PID)
		}
	}
	return out
}

// argv0 returns the base name of the program pid runs, as its first
// argument names it.
func argv0(pid int) string {
	args, _ := procfs.Cmdline(pid)
	if len(args) == 0 {
		return ""
	}
	return filepath.Base(args[0])
}

// marker returns the session marker in pid's environment.
func marker(t *testing.T, pid int) string {
	t.Helper()
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, session.MarkerVar+"="); ok {
			return v
		}
	}
	t.Fatalf("process %d carries no session marker", pid)
	return ""
}

// marked counts the live processes carrying the marker.
func marked(marker string) []int {
	all, _ := procfs.PIDs()
	var pids []int
	for _, pid := range all {
		env, err := os.ReadFile(procfs.Root + "/" + strconv.Itoa(pid) + "/environ")
		if err == nil && bytes.Contains(env, []byte(session.MarkerVar+"="+marker)) && procfs.Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// awaitDip polls /readyz until it has seen 503 and then 200 again; it
// reports whether the 503 was seen (a fast restart can fall between polls).
func (d *running) awaitDip(t *testing.T, mustSee bool) bool {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	seen := false
	for time.Now().Before(deadline) {
		code, reason := d.readyz(t)
		if code == http.StatusServiceUnavailable {
			if !seen {
				t.Logf("/readyz 503: %s", reason)
			}
			seen = true
		}
		if code == http.StatusOK && (seen || !mustSee) {
			return seen
		}
		time.Sleep(2 * time.Millisecond) // polling a probe, as a kubelet does
	}
	t.Fatalf("/readyz did not dip and come back (seen 503: %v)\n%s", seen, d.stderr)
	return false
}

// TestSessionDaemon runs the daemon with its own desktop: it becomes
// ready, a GTK app launched through the ACI shows in observe, killing the
// X server and then the window manager is survived (restarted, /readyz
// down then up), and SIGTERM leaves no X, D-Bus, AT-SPI or app process.
func TestSessionDaemon(t *testing.T) {
	need(t, "Xvfb", "openbox", "dbus-daemon", "zenity")
	bin := build(t, t.TempDir(), ".", "example")
	// sleep is the operator's startup app, never judged; zenity the
	// agent's, judged by identity as the command it runs.
	d := start(t, bin, "-backend", "x11", "-session", "-size", "1024x768", "-app", "sleep 600", "-allow", "zenity")
	d.awaitReady(t, http.StatusOK, 60*time.Second)
	kids := children(t, d.cmd.Process.Pid)
	for _, want := range []string{"Xvfb", "openbox", "dbus-daemon", "sleep"} {
		if kids[want] == 0 {
			t.Fatalf("no %s among the daemon's children %v", want, kids)
		}
	}
	if n := countChildren(t, d.cmd.Process.Pid, "dbus-daemon"); n != 2 {
		t.Fatalf("%d dbus-daemons among the daemon's children, want the session bus and the accessibility bus", n)
	}
	mark := marker(t, kids["Xvfb"])

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := dial(t, ctx, d)
	if err := c.LaunchApp(ctx, "zenity", "--entry", "--title", "Fleet", "--text", "Sandbox name?"); err != nil {
		t.Fatal(err)
	}
	// The operator's startup program is not one the agent may start.
	if err := c.LaunchApp(ctx, "sleep", "601"); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("launch_app of the -app program: %v, want a refusal", err)
	}
	awaitElement(t, ctx, c, "push button", "OK")
	c.Close()

	syscall.Kill(kids["Xvfb"], syscall.SIGKILL)
	d.awaitDip(t, true)
	c = dial(t, ctx, d)
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Fatalf("screenshot after the X server's restart: %v", err)
	}
	if err := c.LaunchApp(ctx, "zenity", "--info", "--title", "Again", "--text", "Back"); err != nil {
		t.Fatal(err)
	}
	awaitElement(t, ctx, c, "push button", "OK")

	syscall.Kill(children(t, d.cmd.Process.Pid)["openbox"], syscall.SIGKILL)
	d.awaitDip(t, false)
	awaitRestart(t, d, "window-manager")
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Fatalf("screenshot after the window manager's restart: %v", err)
	}
	c.Close()
	if got := sample(families(t, mustGet(t, d, daemon.PathMetrics)), "shinken_desktop_restarts_total", map[string]string{"part": "Xvfb"}); got != 1 {
		t.Errorf("X server restarts counted: %v", got)
	}

	d.stop(t)
	if left := marked(mark); len(left) > 0 {
		t.Fatalf("processes of the desktop left after SIGTERM: %v", left)
	}
}

func mustGet(t *testing.T, d *running, path string) string {
	t.Helper()
	code, body := d.get(t, path, "tok")
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return body
}

// awaitRestart waits until /metrics counts a restart of part.
func awaitRestart(t *testing.T, d *running, part string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for sample(families(t, mustGet(t, d, daemon.PathMetrics)), "shinken_desktop_restarts_total", map[string]string{"part": part}) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no restart of %s counted\n%s", part, d.stderr)
		}
		time.Sleep(10 * time.Millisecond) // polling an endpoint
	}
}

// awaitElement observes until an element with role and name shows.
func awaitElement(t *testing.T, ctx context.Context, c *client.Client, role, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		obs, err := c.Observe(ctx, &client.ObserveRequest{Settle: 50 * time.Millisecond})
		if err == nil {
			for _, el := range obs.Elements {
				if el.Role == role && el.Name == name {
					return
				}
			}
		}
	}
	t.Fatalf("no %s %q in the tree", role, name)
}

// TestSessionDaemonKilled kills the daemon outright (SIGKILL, no drain)
// while it serves its own desktop with an app launched through the ACI and
// a command running: no process of the desktop (Xvfb, openbox, both
// dbus-daemons, the accessibility registry, the startup and launched
// apps) and not the command outlive it. Its desktop's folder stays, and
// the next daemon's desktop removes it.
func TestSessionDaemonKilled(t *testing.T) {
	need(t, "Xvfb", "openbox", "dbus-daemon", "zenity")
	bin := build(t, t.TempDir(), ".", "example")
	// The daemons' own temporary folder, which the agent's user may cross
	// as it crosses /tmp.
	tmp, err := os.MkdirTemp("", "killed-daemon-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o711); err != nil {
		t.Fatal(err)
	}
	daemonIn := func(args ...string) *running {
		cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0", "-token", "tok"}, args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		return startCmd(t, cmd)
	}
	d := daemonIn("-backend", "x11", "-session", "-size", "800x600", "-app", "sleep 600", "-allow", "zenity,sleep")
	d.awaitReady(t, http.StatusOK, 60*time.Second)
	mark := marker(t, children(t, d.cmd.Process.Pid)["Xvfb"])
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := dial(t, ctx, d)
	defer c.Close()
	if err := c.LaunchApp(ctx, "zenity", "--entry", "--title", "Killed", "--text", "Still there?"); err != nil {
		t.Fatal(err)
	}
	awaitElement(t, ctx, c, "push button", "OK")
	if _, err := c.ExecStream(ctx, &aci.ExecRequest{Argv: []string{"sleep", "777"}}); err != nil {
		t.Fatal(err)
	}
	command := awaitCommand(t, "sleep", "777")
	names := map[string]int{}
	for _, pid := range marked(mark) {
		names[argv0(pid)]++
	}
	for _, want := range []string{"Xvfb", "openbox", "dbus-daemon", "at-spi2-registryd", "sleep", "zenity"} {
		if names[want] == 0 {
			t.Fatalf("no %s among the desktop's processes %v", want, names)
		}
	}

	d.cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := marked(mark)
		if procfs.Alive(command) {
			left = append(left, command)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived the killed daemon", left)
		}
		time.Sleep(10 * time.Millisecond) // waiting for the kernel; nothing to select on
	}

	left, _ := filepath.Glob(filepath.Join(tmp, "shinken-session-*"))
	if len(left) != 1 {
		t.Fatalf("the killed daemon left %v, want its desktop's folder", left)
	}
	// A minute on (a younger folder may be one being set up), the next
	// daemon's desktop removes it.
	aMinuteAgo := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(left[0], aMinuteAgo, aMinuteAgo); err != nil {
		t.Fatal(err)
	}
	next := daemonIn("-backend", "x11", "-session", "-size", "800x600")
	next.awaitReady(t, http.StatusOK, 60*time.Second)
	if _, err := os.Stat(left[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed daemon's desktop folder %s outlived the next daemon's start: %v", left[0], err)
	}
}

// awaitCommand waits until a process runs this program (by its base name:
// the runtime runs the file it found on PATH, so argv[0] is its path) with
// exactly these arguments, and returns its pid.
func awaitCommand(t *testing.T, program string, args ...string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		all, _ := procfs.PIDs()
		for _, pid := range all {
			got, _ := os.ReadFile(procfs.Root + "/" + strconv.Itoa(pid) + "/cmdline")
			argv := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
			if len(argv) == 1+len(args) && filepath.Base(argv[0]) == program && slices.Equal(argv[1:], args) {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process %s %q", program, args)
		}
		time.Sleep(10 * time.Millisecond) // waiting for a fork; nothing to select on
	}
}

// TestSIGTERMWhileStarting stops the daemon with SIGTERM while it starts:
// its desktop is up and a plugin has not answered initialize yet. It exits
// 0 and leaves no process of the desktop or of the plugin behind.
func TestSIGTERMWhileStarting(t *testing.T) {
	need(t, "Xvfb", "openbox", "dbus-daemon")
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(filepath.Join(plugins, "mute"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The plugin says it runs, then never answers: the daemon waits on it.
	up := filepath.Join(dir, "up")
	manifest, _ := json.Marshal(map[string]any{
		"id": "mute", "version": "1.0.0", "protocolVersion": 1,
		"run": map[string]any{"command": []string{"sh", "-c", `echo up > "$0"; exec sleep 6017`, up}},
	})
	if err := os.WriteFile(filepath.Join(plugins, "mute", "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11", "-session",
		"-size", "800x600", "-plugins", plugins)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	// Polls for the plugin's word that it runs (the daemon's desktop
	// starts before its plugins).
	deadline := time.Now().Add(90 * time.Second)
	for {
		if b, err := os.ReadFile(up); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin never started:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond) // polling a file the plugin writes
	}
	kids := children(t, cmd.Process.Pid)
	if kids["Xvfb"] == 0 {
		t.Fatalf("the plugin started before the desktop: children %v", kids)
	}
	mark := marker(t, kids["Xvfb"])
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("SIGTERM while starting: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no exit within a minute of SIGTERM:\n%s", stderr.String())
	}
	if left := marked(mark); len(left) > 0 {
		t.Errorf("processes of the desktop left after SIGTERM: %v", left)
	}
	all, _ := procfs.PIDs()
	for _, pid := range all {
		if args, _ := procfs.Cmdline(pid); slices.Equal(args, []string{"sleep", "6017"}) && procfs.Alive(pid) {
			t.Errorf("the plugin's program (pid %d) outlived the daemon", pid)
		}
	}
}
