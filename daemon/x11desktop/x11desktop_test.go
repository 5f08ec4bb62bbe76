package x11desktop_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/daemon"
	"shinken.dev/go/daemon/x11desktop"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSessionFollowed serves a supervised session with a daemon, kills
// the accessibility bus under it, and checks that the daemon swaps in a
// desktop on the restarted bus (the old sessions closed, ready again, a
// new session served), counts the restart, then shuts down leaving no
// process of the session.
func TestSessionFollowed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := x11desktop.StartSession(ctx, &session.Options{Width: 800, Height: 600, NoWindowManager: true, Logger: slog.New(slog.DiscardHandler)})
	if errors.Is(err, session.ErrNotInstalled) && os.Getenv("CI") != "true" {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d, err := daemon.New(ctx, &daemon.Options{
		Desktop: s.Desktop(), Listen: []string{"127.0.0.1:0"}, Token: "tok", NoSignals: true,
		Metrics: &daemon.MetricsOptions{Registry: reg}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	s.Follow(d)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(rctx) }()
	aci := d.Endpoints()[0].ACI
	readyz := "http://" + strings.TrimSuffix(strings.TrimPrefix(aci, "ws://"), "/aci") + daemon.PathReadyz
	status := func() int {
		resp, err := http.Get(readyz)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for status() != http.StatusOK {
	}
	old, err := client.Dial(ctx, aci, &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	first := d.Runtime()

	pids, _ := s.Session().Processes()
	bus := procfs.Find(pids, "dbus-daemon", "/accessibility.conf")
	if bus == 0 {
		t.Fatal("no accessibility bus")
	}
	syscall.Kill(bus, syscall.SIGKILL)
	// The swap makes a new Runtime; readiness is back once it serves.
	for d.Runtime() == first || status() != http.StatusOK {
		if ctx.Err() != nil {
			t.Fatal("the desktop was not swapped after the bus restart")
		}
	}
	if _, err := old.Screenshot(ctx, nil); err == nil {
		t.Error("a session of the old desktop is still open")
	}
	if n := restarts(t, reg); n < 1 {
		t.Errorf("%v restarts counted", n)
	}
	c, err := client.Dial(ctx, aci, &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Screenshot(ctx, nil); err != nil {
		t.Errorf("a session of the new desktop: %v", err)
	}
	c.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	if left, err := s.Session().Processes(); err != nil || len(left) > 0 {
		t.Errorf("session processes left: %v %v", left, err)
	}
}

// restarts sums shinken_desktop_restarts_total.
func restarts(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "shinken_desktop_restarts_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
