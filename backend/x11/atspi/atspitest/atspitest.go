// Package atspitest gives a test a desktop whose applications expose their
// accessibility trees: a private X session with a window manager and a
// session D-Bus (package internal/xvfb), the AT-SPI bus launcher, and
// applications started with the toolkit's accessibility bridge on.
//
// A test missing a program it needs is skipped, naming it, or fails when
// the environment variable CI is "true".
package atspitest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
)

// launcherPaths are where distributions install at-spi-bus-launcher.
var launcherPaths = []string{
	"/usr/libexec/at-spi-bus-launcher",
	"/usr/lib/at-spi2-core/at-spi-bus-launcher",
	"/usr/lib/at-spi2/at-spi-bus-launcher",
	"/usr/lib/x86_64-linux-gnu/at-spi2-core/at-spi-bus-launcher",
	"/usr/lib/aarch64-linux-gnu/at-spi2-core/at-spi-bus-launcher",
}

// A Session is a running desktop. Its fields are fixed once Start returns.
type Session struct {
	*xvfb.Server
	// RuntimeDir is the session's XDG_RUNTIME_DIR, where the accessibility
	// bus and the applications' peer-to-peer sockets live.
	RuntimeDir string
	// A11yBus is the accessibility bus address the launcher reported.
	A11yBus string
}

// Missing stops t for a missing program: a skip, a failure under CI=true.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (CI=true: AT-SPI tests must run)", what)
	}
	t.Skipf("skipping AT-SPI test: %s is missing", what)
}

// Start starts a desktop for t, stopped by t's cleanup, which fails t if a
// process of the session survives.
func Start(t testing.TB) *Session {
	t.Helper()
	launcher := ""
	for _, p := range launcherPaths {
		if _, err := os.Stat(p); err == nil {
			launcher = p
			break
		}
	}
	if launcher == "" {
		Missing(t, "at-spi-bus-launcher (package at-spi2-core)")
	}
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		Missing(t, "dbus-daemon")
	}
	runtimeDir, err := os.MkdirTemp("", "atspitest-")
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the session starts, so it runs after the session
	// (and every process using the directory) is gone.
	t.Cleanup(func() { os.RemoveAll(runtimeDir) })
	s := &Session{Server: xvfbtest.Start(t, &xvfb.Options{SessionBus: true}), RuntimeDir: runtimeDir}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := quietServices(ctx, s.SessionBus, runtimeDir); err != nil {
		t.Fatalf("setting the session bus's activation environment: %v", err)
	}
	cmd := s.Command(context.Background(), launcher, "--launch-immediately")
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting at-spi-bus-launcher: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	addr, err := waitA11yBus(ctx, s.SessionBus, exited)
	if err != nil {
		t.Fatalf("waiting for the accessibility bus: %v", err)
	}
	s.A11yBus = addr
	return s
}

// quietServices keeps the services the session bus starts on demand (GTK
// applications start xdg-desktop-portal-gtk) out of the accessibility tree
// and their sockets inside the session's runtime directory.
func quietServices(ctx context.Context, sessionBus, runtimeDir string) error {
	conn, err := dbus.Connect(sessionBus)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.UpdateActivationEnvironment", 0,
		map[string]string{"XDG_RUNTIME_DIR": runtimeDir, "NO_AT_BRIDGE": "1"}).Err
}

// waitA11yBus waits until the launcher owns org.a11y.Bus and answers
// GetAddress.
func waitA11yBus(ctx context.Context, sessionBus string, exited <-chan struct{}) (string, error) {
	conn, err := dbus.Connect(sessionBus)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	for {
		var owned bool
		err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, "org.a11y.Bus").Store(&owned)
		if err != nil {
			return "", err
		}
		if owned {
			var addr string
			err := conn.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr)
			if err == nil && addr != "" {
				return addr, nil
			}
		}
		select {
		case <-exited:
			return "", errors.New("at-spi-bus-launcher exited")
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Env returns the environment of an application on the desktop: the
// session's, with the accessibility bridge on and settings kept in memory.
func (s *Session) Env() []string {
	var env []string
	for _, kv := range s.Server.Env() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "NO_AT_BRIDGE", "AT_SPI_BUS_ADDRESS", "XDG_RUNTIME_DIR", "GTK_MODULES", "GSETTINGS_BACKEND",
			"GDK_BACKEND", "LANGUAGE", "LC_ALL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_RUNTIME_DIR="+s.RuntimeDir, "GTK_MODULES=gail:atk-bridge",
		"GSETTINGS_BACKEND=memory", "GDK_BACKEND=x11", "LC_ALL=C.UTF-8")
}

// Command returns a command that runs name on the desktop, in its own
// process group; the session's Close kills it if it still runs.
func (s *Session) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := s.Server.Command(ctx, name, args...)
	cmd.Env = s.Env()
	return cmd
}

// An App is an application running on the desktop.
type App struct {
	Cmd    *exec.Cmd
	stdout *os.File
	done   chan struct{}
	once   sync.Once
}

// Launch starts an application for t. Its output goes to files, so no
// goroutine copies it; t's cleanup kills it.
func (s *Session) Launch(t testing.TB, name string, args ...string) *App {
	t.Helper()
	return s.LaunchEnv(t, nil, name, args...)
}

// LaunchEnv is Launch with env ("KEY=value") set over the session's.
func (s *Session) LaunchEnv(t testing.TB, env []string, name string, args ...string) *App {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		Missing(t, name)
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := s.Command(context.Background(), name, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = out, errf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	errf.Close()
	a := &App{Cmd: cmd, stdout: out, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		a.Kill()
		out.Close()
	})
	return a
}

// Stdout returns what the application wrote on its standard output so far.
func (a *App) Stdout() string {
	b, _ := os.ReadFile(a.stdout.Name())
	return string(b)
}

// Done is closed when the application has exited.
func (a *App) Done() <-chan struct{} { return a.done }

// Kill kills the application's process group and waits for it.
func (a *App) Kill() {
	a.once.Do(func() {
		syscall.Kill(-a.Cmd.Process.Pid, syscall.SIGCONT)
		syscall.Kill(-a.Cmd.Process.Pid, syscall.SIGKILL)
	})
	<-a.done
}

// Stop freezes the application (SIGSTOP), hung: Kill still ends it.
func (a *App) Stop() error { return syscall.Kill(-a.Cmd.Process.Pid, syscall.SIGSTOP) }

// Cont resumes a stopped application.
func (a *App) Cont() error { return syscall.Kill(-a.Cmd.Process.Pid, syscall.SIGCONT) }

// Python returns a python3 that can import the modules named, or stops t.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	check := "import " + strings.Join(modules, ", ")
	if len(modules) == 0 {
		check = "pass"
	}
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if err := exec.Command(p, "-c", check).Run(); err == nil {
			return p
		}
	}
	Missing(t, fmt.Sprintf("a python3 with %s", strings.Join(modules, ", ")))
	return ""
}

// firefoxPrefs keep a new profile's first run from opening pages or bars
// of its own over the page a test loads: the data-reporting notice opens,
// seconds after the start (later on a loaded machine), a tab that takes
// the view, and the page's tree with it, or a bar that pushes the page
// down; the welcome page and the new tab page loaded in the background
// are work the settle would wait out.
const firefoxPrefs = `user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("startup.homepage_welcome_url", "");
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.policy.dataSubmissionPolicyBypassNotification", true);
user_pref("datareporting.policy.firstRunURL", "");
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("browser.tabs.warnOnClose", false);
user_pref("browser.newtab.preload", false);
`

// FirefoxProfile returns a new Firefox profile, removed by t's cleanup,
// whose first run opens only the page Firefox is given.
func FirefoxProfile(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "user.js"), []byte(firefoxPrefs), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
