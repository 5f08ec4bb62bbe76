package main

import (
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/xvfb"
	"shinken.dev/go/internal/xvfb/xvfbtest"
)

// x11Daemon runs the daemon with -backend x11 on s's display, with s's
// session bus (if any) and nothing else of the test's environment that
// would point it at another bus.
func x11Daemon(t *testing.T, bin string, s *xvfb.Server) *running {
	t.Helper()
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11")
	for _, kv := range s.Env() {
		if !strings.HasPrefix(kv, "AT_SPI_BUS_ADDRESS=") && (s.SessionBus != "" || !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=")) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return startCmd(t, cmd)
}

// TestReadyzAccessibility runs the daemon with -backend x11 on an existing
// display (no -session). With an AT-SPI bus there, /readyz is 200 while
// the bus answers; when the bus goes away it is 503 with a JSON reason
// naming the accessibility bus, and once a bus answers again (restarted
// as a desktop's supervisor would) it is 200 again, with no restart of the
// daemon. On a display without any bus, accessibility is off and a
// captured frame is enough.
func TestReadyzAccessibility(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	t.Run("bus", func(t *testing.T) {
		s := xvfbtest.Start(t, &xvfb.Options{Accessibility: true, Restart: true})
		d := x11Daemon(t, bin, s)
		d.awaitReady(t, http.StatusOK, 60*time.Second)
		syscall.Kill(a11yBusPID(t, s), syscall.SIGKILL)
		reason := d.awaitReady(t, http.StatusServiceUnavailable, 30*time.Second)
		if !strings.Contains(reason, "accessibility") {
			t.Errorf("/readyz reason %q does not name the accessibility bus", reason)
		}
		t.Logf("/readyz 503: %s", reason)
		d.awaitReady(t, http.StatusOK, 60*time.Second)
		d.stop(t)
	})
	t.Run("none", func(t *testing.T) {
		s := xvfbtest.Start(t, nil)
		d := x11Daemon(t, bin, s)
		if code, reason := d.readyz(t); code != http.StatusOK {
			t.Fatalf("/readyz without an accessibility bus: %d %s", code, reason)
		}
		d.stop(t)
	})
}

// a11yBusPID finds the session's accessibility bus: the dbus-daemon with
// at-spi2's configuration.
func a11yBusPID(t *testing.T, s *xvfb.Server) int {
	t.Helper()
	pids, err := s.Processes()
	if err != nil {
		t.Fatal(err)
	}
	if pid := procfs.Find(pids, "dbus-daemon", "/accessibility.conf"); pid != 0 {
		return pid
	}
	t.Fatalf("no accessibility bus among the session's processes %v", pids)
	return 0
}
