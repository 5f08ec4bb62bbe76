package session_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken"
)

// TestA11yBusPublished checks that the accessibility bus is published as
// at-spi-bus-launcher publishes it: org.a11y.Bus answers GetAddress with
// the bus's address, org.a11y.Status holds IsEnabled and takes
// ScreenReaderEnabled (announcing the change), and the root window carries
// AT_SPI_BUS.
func TestA11yBusPublished(t *testing.T) {
	s := start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := dbus.Connect(s.SessionBus)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	obj := conn.Object("org.a11y.Bus", "/org/a11y/bus")
	var addr string
	if err := obj.CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr); err != nil || addr != s.A11yBus() || !strings.HasPrefix(addr, "unix:path=") {
		t.Fatalf("GetAddress: %q %v, want %q", addr, err, s.A11yBus())
	}
	if out := xprop(t, s, "AT_SPI_BUS"); !strings.Contains(out, `"`+addr+`"`) {
		t.Fatalf("AT_SPI_BUS: %s, want %s", out, addr)
	}
	var enabled dbus.Variant
	if err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, "org.a11y.Status", "IsEnabled").Store(&enabled); err != nil || enabled.Value() != true {
		t.Fatalf("IsEnabled: %v %v", enabled, err)
	}
	if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchInterface("org.freedesktop.DBus.Properties"), dbus.WithMatchMember("PropertiesChanged")); err != nil {
		t.Fatal(err)
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	if err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Set", 0, "org.a11y.Status", "ScreenReaderEnabled", dbus.MakeVariant(true)).Err; err != nil {
		t.Fatal(err)
	}
	select {
	case sig := <-signals:
		if changed, ok := sig.Body[1].(map[string]dbus.Variant); !ok || changed["ScreenReaderEnabled"].Value() != true {
			t.Fatalf("PropertiesChanged %v", sig.Body)
		}
	case <-ctx.Done():
		t.Fatal("no PropertiesChanged for ScreenReaderEnabled")
	}
	var xml string
	if err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Introspectable.Introspect", 0).Store(&xml); err != nil || !strings.Contains(xml, "org.a11y.Status") {
		t.Fatalf("Introspect: %v %s", err, xml)
	}
}

// pyQt5 returns the python3 that runs the Qt test form, failing (never
// skipping) under CI=true when it has no PyQt5.
func pyQt5(t *testing.T) string {
	t.Helper()
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import PyQt5.QtWidgets").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no python3 with PyQt5 (CI=true: this test must run): %v", err)
		}
		t.Skipf("skipping: no python3 with PyQt5: %v", err)
	}
	return python
}

// TestQtFindsTheBus starts a Qt application that is not told to expose
// its tree unconditionally: it asks org.a11y.Status whether accessibility
// is on and joins the bus the session published, so its form shows in a
// snapshot.
func TestQtFindsTheBus(t *testing.T) {
	python := pyQt5(t)
	s := start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := s.Command(ctx, python, "../atspi/testdata/qtform.py", "Qt on the session bus")
	var env []string
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, "QT_LINUX_ACCESSIBILITY_ALWAYS_ON=") && !strings.HasPrefix(kv, "QT_ACCESSIBILITY=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	c, err := atspi.Connect(ctx, &atspi.Options{SessionBus: s.SessionBus, Display: s.Display})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		tree, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
		if err == nil && hasNode(tree, "push button", "Submit") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Qt form's Submit button never showed: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling the tree while the app starts
	}
}

func hasNode(tree *shinken.Tree, role, name string) bool {
	for _, n := range tree.Nodes {
		if n.Role == role && n.Name == name {
			return true
		}
	}
	return false
}

// TestA11yBusRestart kills the accessibility bus: it is started again at
// its address and published again (the name taken over from the dead
// bus's connection), and the session answers.
func TestA11yBusRestart(t *testing.T) {
	ch, on := events()
	s := start(t, &session.Options{NoWindowManager: true, OnEvent: on})
	addr := s.A11yBus()
	for range 2 {
		syscall.Kill(a11yBusPID(t, s), syscall.SIGKILL)
		e := await(t, ch, session.PartA11yBus, session.EventRestarted)
		if !slices.Equal(e.Restarted, []session.Part{session.PartA11yBus}) {
			t.Fatalf("restarted %v", e.Restarted)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if got := s.A11yBus(); got == "" || strings.SplitN(got, ",", 2)[0] != strings.SplitN(addr, ",", 2)[0] {
			t.Fatalf("the bus moved from %q to %q", addr, got)
		}
	}
}

// a11yBusPID finds the accessibility bus: the dbus-daemon with at-spi2's
// configuration.
func a11yBusPID(t *testing.T, s *session.Session) int {
	t.Helper()
	pids, _ := s.Processes()
	if pid := procfs.Find(pids, "dbus-daemon", "/accessibility.conf"); pid != 0 {
		return pid
	}
	t.Fatal("no accessibility bus")
	return 0
}

// TestNoLauncherActivated asks a session bus with no accessibility bus
// on it for org.a11y.Bus: the call fails rather than have the bus start
// at-spi-bus-launcher, whose own dbus-daemon would outlive a daemon killed
// outright.
func TestNoLauncherActivated(t *testing.T) {
	s := start(t, &session.Options{NoWindowManager: true, NoAccessibility: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := dbus.Connect(s.SessionBus)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var addr string
	err = conn.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr)
	if err == nil {
		t.Fatalf("GetAddress answered %q in a session without accessibility", addr)
	}
	if n := countMarked(s, "at-spi-bus-launcher"); n != 0 {
		t.Fatalf("%d at-spi-bus-launcher started", n)
	}
}

// topNames returns the names of the applications (depth 0) and of their
// windows (depth 1) in a snapshot of the desktop.
func topNames(tree *shinken.Tree) map[string]bool {
	names := map[string]bool{}
	for _, n := range tree.Nodes {
		if n.Depth <= 1 {
			names[n.Name] = true
		}
	}
	return names
}

// waitTree connects to the session's current accessibility bus and waits
// until a snapshot of the desktop holds every name in want (as an
// application or a window); it returns that snapshot and the client.
func waitTree(t *testing.T, ctx context.Context, s *session.Session, want ...string) (*atspi.Client, *shinken.Tree) {
	t.Helper()
	c, err := atspi.Connect(ctx, &atspi.Options{SessionBus: s.SessionBus, Display: s.Display})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for {
		tree, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
		if err == nil {
			names := topNames(tree)
			if !slices.ContainsFunc(want, func(w string) bool { return !names[w] }) {
				return c, tree
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the tree never held %q: %v", want, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the tree while the apps start
	}
}

// typeInEntry sets the text of the entry in the window named window
// through the tree and reads it back in a new snapshot, with no wait
// between.
func typeInEntry(t *testing.T, ctx context.Context, c *atspi.Client, tree *shinken.Tree, window, text string) {
	t.Helper()
	var id string
	for _, n := range tree.Nodes {
		if n.Role == "text" && slices.Contains(n.States, "editable") && inWindow(tree, n, window) {
			id = n.ID
		}
	}
	if id == "" {
		t.Fatalf("no entry in %q", window)
	}
	if err := c.Perform(ctx, id, shinken.ElementAction{Op: shinken.OpSetValue, Text: text}); err != nil {
		t.Fatal(err)
	}
	after, err := c.Snapshot(ctx, shinken.SnapshotOptions{Scope: shinken.TreeDesktop})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range after.Nodes {
		if n.ID == id {
			if n.Value != text {
				t.Fatalf("the entry reads %q after setting %q", n.Value, text)
			}
			return
		}
	}
	t.Fatal("the entry is gone from the tree")
}

// inWindow reports whether n lies under the window named window.
func inWindow(tree *shinken.Tree, n shinken.Node, window string) bool {
	for n.Parent >= 0 {
		n = tree.Nodes[n.Parent]
		if n.Depth == 1 && n.Name == window {
			return true
		}
	}
	return false
}

// TestBusRestartApps kills the accessibility bus, then the session bus,
// under running zenity and gtk3-demo. Toolkits do not join a new bus: the
// session starts its startup apps again, and they are back in the tree
// (an entry set through the tree reads back at once); an app it did not
// start is blind, and Check says so (ErrAppsLost) until that app exits.
func TestBusRestartApps(t *testing.T) {
	ch, on := events()
	s := start(t, &session.Options{OnEvent: on, Apps: [][]string{
		{"zenity", "--entry", "--title", "startup zenity", "--text", "Name:"},
		{"gtk3-demo"},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	other := s.Command(ctx, "zenity", "--info", "--title", "launched zenity", "--text", "not a startup app")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	otherDone := make(chan struct{})
	go func() { other.Wait(); close(otherDone) }()
	defer func() { other.Process.Kill(); <-otherDone }()

	c, tree := waitTree(t, ctx, s, "startup zenity", "gtk3-demo", "launched zenity")
	typeInEntry(t, ctx, c, tree, "startup zenity", "before")
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}

	syscall.Kill(a11yBusPID(t, s), syscall.SIGKILL)
	await(t, ch, session.PartA11yBus, session.EventRestarted)
	err := s.Check(ctx)
	var pe *session.PartError
	if !errors.Is(err, session.ErrAppsLost) || !errors.As(err, &pe) || pe.Part != session.PartA11yBus {
		t.Fatalf("Check with the launched zenity blind: %v, want ErrAppsLost from the a11y-bus", err)
	}
	if strings.Contains(err.Error(), strconv.Itoa(other.Process.Pid)) || strings.Contains(err.Error(), "zenity") {
		t.Fatalf("Check's words name the process: %v", err)
	}
	if lost := s.LostApps(); !slices.Equal(lost, []int{other.Process.Pid}) {
		t.Fatalf("lost apps %v, want the launched zenity %d", lost, other.Process.Pid)
	}
	c, tree = waitTree(t, ctx, s, "startup zenity", "gtk3-demo")
	if topNames(tree)["launched zenity"] {
		t.Fatal("the launched zenity is in the tree of the new bus")
	}
	typeInEntry(t, ctx, c, tree, "startup zenity", "héllo ✓")
	other.Process.Kill()
	<-otherDone
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check once the blind app exited: %v", err)
	}

	syscall.Kill(sessionBusPID(t, s), syscall.SIGKILL)
	e := await(t, ch, session.PartSessionBus, session.EventRestarted)
	if !slices.Equal(e.Restarted, []session.Part{session.PartSessionBus, session.PartA11yBus}) {
		t.Fatalf("restarted %v", e.Restarted)
	}
	c, tree = waitTree(t, ctx, s, "startup zenity", "gtk3-demo")
	typeInEntry(t, ctx, c, tree, "startup zenity", "after the session bus")
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRelaunchLostApps: with RelaunchLostApps, applications the session
// did not start (zenity, and a Qt 5 form run by python3 from this
// directory), blind after a restart of the accessibility bus, are started
// again as they were, and are back in the tree.
func TestRelaunchLostApps(t *testing.T) {
	python := pyQt5(t)
	ch, on := events()
	s := start(t, &session.Options{OnEvent: on, NoWindowManager: true, RelaunchLostApps: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var done []chan struct{}
	for _, argv := range [][]string{
		{"zenity", "--entry", "--title", "launched zenity", "--text", "Name:"},
		{python, "../atspi/testdata/qtform.py", "launched Qt"},
	} {
		app := s.Command(ctx, argv[0], argv[1:]...)
		if err := app.Start(); err != nil {
			t.Fatal(err)
		}
		d := make(chan struct{})
		go func() { app.Wait(); close(d) }()
		defer func() { app.Process.Kill(); <-d }()
		done = append(done, d)
	}
	c, tree := waitTree(t, ctx, s, "launched zenity", "launched Qt")
	typeInEntry(t, ctx, c, tree, "launched zenity", "before")

	syscall.Kill(a11yBusPID(t, s), syscall.SIGKILL)
	await(t, ch, session.PartA11yBus, session.EventRestarted)
	for _, d := range done {
		<-d // the session stopped it, to start it again
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check after the relaunch: %v", err)
	}
	if lost := s.LostApps(); len(lost) != 0 {
		t.Fatalf("lost apps %v after the relaunch", lost)
	}
	c, tree = waitTree(t, ctx, s, "launched zenity", "launched Qt")
	typeInEntry(t, ctx, c, tree, "launched zenity", "after")
	if !hasNode(tree, "push button", "Submit") {
		t.Fatal("the relaunched Qt form has no Submit button in the tree")
	}
}
