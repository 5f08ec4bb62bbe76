package session_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
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

// TestQtFindsTheBus starts a Qt application that is not told to expose
// its tree unconditionally: it asks org.a11y.Status whether accessibility
// is on and joins the bus the session published, so its form shows in a
// snapshot.
func TestQtFindsTheBus(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import PyQt5.QtWidgets").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no python3 with PyQt5 (CI=true: this test must run): %v", err)
		}
		t.Skipf("skipping: no python3 with PyQt5: %v", err)
	}
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
