package session_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"go.uber.org/goleak"

	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/internal/procfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start starts a session for t, failing (never skipping) under CI=true
// when a program is missing.
func start(t *testing.T, o *session.Options) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := session.Start(ctx, o)
	if errors.Is(err, session.ErrNotInstalled) && os.Getenv("CI") != "true" {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if pids, err := s.Processes(); err != nil || len(pids) > 0 {
			t.Errorf("session processes left after Close: %v %v", pids, err)
		}
	})
	return s
}

// events collects a session's events on a channel.
func events() (chan session.Event, func(session.Event)) {
	ch := make(chan session.Event, 64)
	return ch, func(e session.Event) { ch <- e }
}

// await waits for an event of kind for part.
func await(t *testing.T, ch chan session.Event, part session.Part, kind session.EventKind) session.Event {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case e := <-ch:
			if e.Part == part && e.Kind == kind {
				return e
			}
			t.Logf("event %+v", e)
		case <-timeout:
			t.Fatalf("no %s event for %s", kind, part)
		}
	}
}

// argv0 returns the first argument pid was started with.
func argv0(pid int) string {
	args, _ := procfs.Cmdline(pid)
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// partPID finds the pid of the session process whose command line starts
// with name.
func partPID(t *testing.T, s *session.Session, name string) int {
	t.Helper()
	pids, err := s.Processes()
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if strings.HasSuffix(argv0(pid), name) {
			return pid
		}
	}
	t.Fatalf("no %s among the session's processes %v", name, pids)
	return 0
}

// countPIDs counts the session processes whose argv[0] ends with name.
func countPIDs(t *testing.T, s *session.Session, name string) int {
	t.Helper()
	pids, err := s.Processes()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pid := range pids {
		if strings.HasSuffix(argv0(pid), name) {
			n++
		}
	}
	return n
}

// xprop reads a root property through the session's environment.
func xprop(t *testing.T, s *session.Session, prop string) string {
	t.Helper()
	if _, err := exec.LookPath("xprop"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xprop not installed (CI=true: X tests must run)")
		}
		t.Skip("skipping: xprop not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := s.Command(ctx, "xprop", "-root", prop).CombinedOutput()
	if err != nil {
		t.Fatalf("xprop: %v: %s", err, out)
	}
	return string(out)
}

// TestDesktop starts the whole desktop, checks each part answers, kills
// the X server and then the window manager and sees both come back (with
// the parts that need them) at the same addresses, and that a startup app
// is started again (in place of the one running) with the X server, and
// killed by Close.
func TestDesktop(t *testing.T) {
	ch, on := events()
	s := start(t, &session.Options{Width: 800, Height: 600, OnEvent: on, Apps: [][]string{{"sleep", "300"}}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if s.SessionBus == "" || s.A11yBus() == "" || !strings.HasPrefix(s.Display, ":") {
		t.Fatalf("display %q bus %q a11y %q", s.Display, s.SessionBus, s.A11yBus())
	}
	if out := xprop(t, s, "AT_SPI_BUS"); !strings.Contains(out, "unix:") {
		t.Fatalf("no AT_SPI_BUS on the root: %s", out)
	}
	if out := xprop(t, s, "_NET_SUPPORTING_WM_CHECK"); !strings.Contains(out, "window id") {
		t.Fatalf("no window manager: %s", out)
	}
	if !slices.Contains(s.AppEnv(), "GTK_MODULES=gail:atk-bridge") {
		t.Fatal("AppEnv does not turn the GTK accessibility bridge on")
	}
	if n := countPIDs(t, s, "sleep"); n != 1 {
		t.Fatalf("%d startup apps running", n)
	}
	sleep := partPID(t, s, "sleep")

	syscall.Kill(partPID(t, s, "Xvfb"), syscall.SIGKILL)
	// The first death noticed may be the window manager's, which lost its
	// server; the restart starts from the server either way.
	e := await(t, ch, session.PartX, session.EventRestarted)
	if !slices.Equal(e.Restarted, []session.Part{session.PartX, session.PartWindowManager, session.PartA11yBus}) {
		t.Fatalf("restarted %v", e.Restarted)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if out := xprop(t, s, "AT_SPI_BUS"); !strings.Contains(out, "unix:") {
		t.Fatalf("no AT_SPI_BUS on the restarted server: %s", out)
	}
	if n := countPIDs(t, s, "sleep"); n != 1 || partPID(t, s, "sleep") == sleep {
		t.Fatalf("%d startup apps after the restart, want a new one in place of the first", n)
	}

	syscall.Kill(partPID(t, s, "openbox"), syscall.SIGKILL)
	await(t, ch, session.PartWindowManager, session.EventExited)
	e = await(t, ch, session.PartWindowManager, session.EventRestarted)
	if !slices.Equal(e.Restarted, []session.Part{session.PartWindowManager}) {
		t.Fatalf("restarted %v", e.Restarted)
	}
	if out := xprop(t, s, "_NET_SUPPORTING_WM_CHECK"); !strings.Contains(out, "window id") {
		t.Fatalf("no window manager after the restart: %s", out)
	}

	// The session bus comes back at its address, with a new accessibility
	// bus on it.
	syscall.Kill(sessionBusPID(t, s), syscall.SIGKILL)
	e = await(t, ch, session.PartSessionBus, session.EventRestarted)
	if !slices.Equal(e.Restarted, []session.Part{session.PartSessionBus, session.PartA11yBus}) {
		t.Fatalf("restarted %v", e.Restarted)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// sessionBusPID finds the session's own dbus-daemon (the accessibility
// bus has another).
func sessionBusPID(t *testing.T, s *session.Session) int {
	t.Helper()
	pids, _ := s.Processes()
	if pid := procfs.Find(pids, "dbus-daemon", "/session-bus.conf"); pid != 0 {
		return pid
	}
	t.Fatal("no session dbus-daemon")
	return 0
}

// TestBudget kills the window manager more often than the budget allows:
// the session gives up, says why (in words for Ready, with the details for
// Err), and Close still leaves nothing.
func TestBudget(t *testing.T) {
	ch, on := events()
	s := start(t, &session.Options{NoSessionBus: true, MaxRestarts: 1, OnEvent: on})
	syscall.Kill(partPID(t, s, "openbox"), syscall.SIGKILL)
	await(t, ch, session.PartWindowManager, session.EventRestarted)
	syscall.Kill(partPID(t, s, "openbox"), syscall.SIGKILL)
	await(t, ch, session.PartWindowManager, session.EventGaveUp)
	<-s.Done()
	// Ready says what in words, for a probe anyone may read; Err has the
	// exit status and the part's output.
	err := s.Ready()
	var pe *session.PartError
	if !errors.As(err, &pe) || pe.Part != session.PartWindowManager || strings.Contains(err.Error(), "signal") || !strings.Contains(pe.Err.Error(), "signal: killed") {
		t.Fatalf("Ready after giving up: %v", err)
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("Err after giving up: %v", err)
	}
}

// TestMissing names the program that is missing.
func TestMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := session.Start(context.Background(), &session.Options{NoAccessibility: true})
	if !errors.Is(err, session.ErrNotInstalled) || !strings.Contains(err.Error(), "Xvfb") {
		t.Fatalf("got %v", err)
	}
}

// TestParentDeath kills a process running a whole session outright (no
// Close), with the accessibility registry activated: every process of the
// session (Xvfb, openbox, both dbus-daemons, at-spi2-registryd, a startup
// app) dies with it, and the next Start removes the folder it left.
func TestParentDeath(t *testing.T) {
	if os.Getenv("SESSION_HELPER") == "1" {
		parentDeathHelper()
		return
	}
	if _, err := exec.LookPath("Xvfb"); err != nil && os.Getenv("CI") != "true" {
		t.Skip("skipping: Xvfb not installed")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestParentDeath$")
	tmp := t.TempDir() // the helper's temporary folder, where it leaves its session's
	cmd.Env = append(os.Environ(), "SESSION_HELPER=1", "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	marker, dir, _ := strings.Cut(strings.TrimSpace(line), " ")
	if marker == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper started no session: %s", stderr.String())
	}
	probe := &session.Session{Marker: marker}
	names := processNames(t, probe)
	for _, want := range []string{"Xvfb", "openbox", "dbus-daemon", "at-spi2-registryd", "sleep"} {
		if names[want] == 0 {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no %s among the session's processes %v", want, names)
		}
	}
	if names["dbus-daemon"] != 2 {
		t.Errorf("%d dbus-daemons, want the session bus and the accessibility bus", names["dbus-daemon"])
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids, _ := probe.Processes()
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			left := processNames(t, probe)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived the killed daemon", left)
		}
		time.Sleep(5 * time.Millisecond) // waiting for the kernel; nothing to select on
	}
	// Its folder stayed; a Start sweeps it (at any age here: nothing else
	// starts sessions in this temporary folder).
	if filepath.Dir(dir) != tmp {
		t.Fatalf("the helper's session folder %q is not in its temporary folder %q", dir, tmp)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed daemon's session folder: %v", err)
	}
	if got := session.SweepStale(tmp, 0); !slices.Equal(got, []string{dir}) {
		t.Errorf("the sweep removed %v, want the killed daemon's folder %s", got, dir)
	}
}

// parentDeathHelper is TestParentDeath's daemon: it starts a session,
// wakes the accessibility registry, prints its marker and its folder, and
// waits to be killed.
func parentDeathHelper() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := session.Start(ctx, &session.Options{Apps: [][]string{{"sleep", "600"}}})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	conn, err := dbus.Connect(s.A11yBus())
	if err == nil {
		err = conn.Object("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root").
			CallWithContext(ctx, "org.freedesktop.DBus.Peer.Ping", 0).Err
	}
	if err != nil {
		os.Stderr.WriteString("waking the registry: " + err.Error() + "\n")
		os.Exit(2)
	}
	// The startup app may not have been forked yet when Start returns.
	for countMarked(s, "sleep") == 0 {
		time.Sleep(5 * time.Millisecond) // waiting for a fork; nothing to select on
	}
	os.Stdout.WriteString(s.Marker + " " + filepath.Dir(s.RuntimeDir) + "\n")
	select {} // until killed
}

// processNames counts the session's live processes by argv[0]'s base name.
func processNames(t *testing.T, s *session.Session) map[string]int {
	t.Helper()
	pids, err := s.Processes()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, pid := range pids {
		out[filepath.Base(argv0(pid))]++
	}
	return out
}

// countMarked counts the session's processes whose argv[0] ends with name.
func countMarked(s *session.Session, name string) int {
	pids, _ := s.Processes()
	n := 0
	for _, pid := range pids {
		if strings.HasSuffix(argv0(pid), name) {
			n++
		}
	}
	return n
}
