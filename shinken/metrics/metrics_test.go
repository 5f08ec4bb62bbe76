package metrics_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/goleak"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/metrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// value returns the value of the series of name whose labels include
// labels: a counter's or gauge's value, a histogram's count.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					found = found || (lp.GetName() == k && lp.GetValue() == v)
				}
				if !found {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

// TestScriptedSession runs a session and checks the metrics count what it
// did, then has promtool check the exposition.
func TestScriptedSession(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	desk := headless.New(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "t", Recorder: m, Executor: osexec.New(nil), Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	c, err := client.Dial(ctx, url, &client.DialOptions{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatJPEG}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Observe(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Click(ctx, aci.Px(10, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Dial(ctx, url, &client.DialOptions{Token: "bad"}); err == nil {
		t.Fatal("bad token admitted")
	}
	m.Decision("allow")
	if got := value(t, reg, "shinken_sessions_open", nil); got != 1 {
		t.Errorf("sessions open %v", got)
	}
	c.Close()
	rt.Close() // the click, answered last, may be recorded just after its ack

	want := []struct {
		name   string
		labels map[string]string
		n      float64
	}{
		{"shinken_sessions_total", nil, 1},
		{"shinken_hellos_refused_total", map[string]string{"reason": "unauthorized"}, 1},
		{"shinken_action_duration_seconds", map[string]string{"verb": "screenshot", "outcome": "ok"}, 1},
		{"shinken_action_duration_seconds", map[string]string{"verb": "observe", "outcome": "ok"}, 1},
		{"shinken_action_duration_seconds", map[string]string{"verb": "exec", "outcome": "ok"}, 2},
		{"shinken_action_duration_seconds", map[string]string{"verb": "click", "outcome": "ok"}, 1},
		{"shinken_screenshot_bytes", map[string]string{"format": "jpeg"}, 1},
		{"shinken_screenshot_encode_seconds", map[string]string{"format": "jpeg"}, 1},
		{"shinken_observe_capture_seconds", nil, 1},
		{"shinken_observe_nodes", nil, 1},
		{"shinken_exec_duration_seconds", map[string]string{"outcome": "exited"}, 2},
		{"shinken_plugin_decisions_total", map[string]string{"verdict": "allow"}, 1},
	}
	for _, w := range want {
		if got := value(t, reg, w.name, w.labels); got != w.n {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.n)
		}
	}
	PromtoolCheck(t, reg)
}

// PromtoolCheck writes reg's exposition and has promtool check it.
func PromtoolCheck(t *testing.T, reg *prometheus.Registry) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not installed (Debian package prometheus; CI=true: this check must run)")
		}
		t.Skip("skipping: promtool not installed (Debian package prometheus)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestClientKilled drops a client's connection (no close handshake) while
// its wait is in flight: the action is counted with the outcome
// client_closed, and nothing as backend_error.
func TestClientKilled(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	ended := make(chan struct{}, 1)
	rec := shinken.RecorderFunc(func(e shinken.Event) {
		m.Record(e)
		if e.Kind == shinken.EventSessionClosed {
			ended <- struct{}{}
		}
	})
	rt := shinken.NewRuntime(headless.New(nil), &shinken.RuntimeOptions{Token: "t", Recorder: rec, Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for _, msg := range []string{
		`{"type":"hello","v":0,"client":{"name":"killed","version":"1"},"token":"t"}`,
		`{"type":"action","call_id":"w","action":{"verb":"wait","ms":60000}}`,
		`{"type":"ping","t":1}`,
	} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// The welcome, then the pong, which comes once the wait is in flight.
	for _, want := range []string{`"welcome"`, `"pong"`} {
		_, data, err := ws.Read(ctx)
		if err != nil || !strings.Contains(string(data), want) {
			t.Fatalf("want %s, got %s %v", want, data, err)
		}
		schematest.Valid(t, "", data)
	}
	ws.CloseNow()
	<-ended // the wait is recorded before the session's end
	if got := value(t, reg, "shinken_action_duration_seconds", map[string]string{"verb": "wait", "outcome": shinken.OutcomeClientClosed}); got != 1 {
		t.Errorf("waits counted client_closed: %v, want 1", got)
	}
	if got := value(t, reg, "shinken_action_duration_seconds", map[string]string{"outcome": "backend_error"}); got != 0 {
		t.Errorf("actions counted backend_error: %v, want 0", got)
	}
	PromtoolCheck(t, reg)
}
