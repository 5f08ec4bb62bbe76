package xvfb_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSession starts a full session, checks that a client with the session's
// environment can use the display and the bus, and that Close leaves no
// process behind, including one started from the session.
func TestSession(t *testing.T) {
	s := xvfbtest.Start(t, &xvfb.Options{SessionBus: true})
	if !strings.HasPrefix(s.Display, ":") || s.SessionBus == "" {
		t.Fatalf("display %q bus %q", s.Display, s.SessionBus)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	needXprop(t)
	out, err := s.Command(ctx, "xprop", "-root", "_NET_SUPPORTING_WM_CHECK").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "window id") {
		t.Fatalf("xprop: %v: %s", err, out)
	}
	bus, err := s.Command(ctx, "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
		"/org/freedesktop/DBus", "org.freedesktop.DBus.GetId").CombinedOutput()
	if err != nil {
		t.Fatalf("dbus-send: %v: %s", err, bus)
	}
	// A straggler that outlives its parent must still be killed by Close.
	sleeper := s.Command(ctx, "sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
	out, err = sleeper.Output()
	if err != nil {
		t.Fatal(err)
	}
	pids, err := s.Processes()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pid := range pids {
		found = found || strings.TrimSpace(string(out)) == strconv.Itoa(pid)
	}
	if !found {
		t.Fatalf("straggler %s not among session processes %v", out, pids)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if pids, _ := s.Processes(); len(pids) != 0 {
		t.Fatalf("left: %v", pids)
	}
}

// TestNoAuth checks that the server refuses a client without the cookie.
func TestNoAuth(t *testing.T) {
	s := xvfbtest.Start(t, &xvfb.Options{NoWM: true})
	needXprop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := s.Command(ctx, "xprop", "-root", "-display", s.Display)
	cmd.Env = append(cmd.Env, "XAUTHORITY=/nonexistent")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("xprop without cookie succeeded: %s", out)
	}
}

// needXprop stops t when xprop is missing, the way xvfbtest treats Xvfb.
func needXprop(t *testing.T) {
	if _, err := exec.LookPath("xprop"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xprop not installed (CI=true: X tests must run)")
		}
		t.Skip("skipping: xprop not installed")
	}
}
