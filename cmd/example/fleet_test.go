package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/daemon"

	"github.com/coder/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// httpBase is the daemon's http:// base URL.
func (d *running) httpBase() string {
	return "http" + strings.TrimSuffix(strings.TrimPrefix(d.aci, "ws"), daemon.PathACI)
}

// get fetches the daemon's path, with a bearer token unless token is "".
func (d *running) get(t *testing.T, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, d.httpBase()+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readyz returns /readyz's status and reason.
func (d *running) readyz(t *testing.T) (int, string) {
	t.Helper()
	code, body := d.get(t, daemon.PathReadyz, "")
	var r struct {
		Ready  bool   `json:"ready"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("readyz body %q: %v", body, err)
	}
	if r.Ready != (code == http.StatusOK) {
		t.Fatalf("readyz %d with %s", code, body)
	}
	return code, r.Reason
}

// awaitReady polls /readyz until it answers want, and returns the reason.
func (d *running) awaitReady(t *testing.T, want int, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		code, reason := d.readyz(t)
		if code == want {
			return reason
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d (%s) after %v, want %d\n%s", code, reason, within, want, d.stderr)
		}
		time.Sleep(5 * time.Millisecond) // polling a probe, as a kubelet does; not synchronisation
	}
}

// TestHealthReadyDrain checks /healthz and /readyz, then SIGTERMs the
// daemon during a streamed exec: /readyz turns 503 at once, a new
// connection is refused, the exec finishes, the session gets 1001 and
// the daemon exits cleanly.
func TestHealthReadyDrain(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	d := start(t, bin)
	if code, body := d.get(t, daemon.PathHealthz, ""); code != 200 || !strings.Contains(body, "alive") {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	if code, reason := d.readyz(t); code != 200 {
		t.Fatalf("/readyz: %d %s", code, reason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, d)
	// The command is in flight until the test writes to its fifo.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := c.ExecStream(ctx, &aci.ExecRequest{Argv: []string{"cat", fifo}})
	if err != nil {
		t.Fatal(err)
	}
	// The runtime reads a session's messages in order: once a later call
	// is answered, the exec is being handled.
	if _, err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	if reason := d.awaitReady(t, http.StatusServiceUnavailable, 5*time.Second); reason != "the daemon is draining" {
		t.Fatalf("/readyz reason %q, want the daemon is draining", reason)
	}
	if code, _ := d.get(t, daemon.PathHealthz, ""); code != 200 {
		t.Fatalf("/healthz while draining: %d", code)
	}
	_, resp, err := websocket.Dial(ctx, d.aci, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("new connection while draining: %v %v", err, resp)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("finished\n")
	f.Close()
	var out strings.Builder
	for {
		ch, err := x.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			d.cmd.Process.Kill()
			<-d.exited
			d.exited <- nil
			t.Fatalf("exec stream: %v\n%s", err, d.stderr)
		}
		out.Write(ch.Data)
	}
	if exit := x.Exit(); exit == nil || exit.ExitCode == nil || *exit.ExitCode != 0 || out.String() != "finished\n" {
		t.Fatalf("the in-flight exec: %+v %q", x.Exit(), out.String())
	}
	if _, err := c.Screenshot(ctx, nil); err == nil {
		t.Fatal("a call after the drain was answered")
	}
	select {
	case err := <-d.exited:
		d.exited <- err
		if err != nil {
			t.Fatalf("daemon exit: %v\n%s", err, d.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("daemon did not exit after the drain:\n%s", d.stderr)
	}
}

// TestProbe runs the binary's -probe mode against /readyz and /healthz,
// and against a path that is not there.
func TestProbe(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	d := start(t, bin)
	for _, tc := range []struct {
		path string
		ok   bool
	}{{daemon.PathReadyz, true}, {daemon.PathHealthz, true}, {"/nothing-here/", false}} {
		out, err := exec.Command(bin, "-probe", d.httpBase()+tc.path).CombinedOutput()
		if (err == nil) != tc.ok {
			t.Errorf("-probe %s: %v %s", tc.path, err, out)
		}
	}
	d.stop(t)
	if out, err := exec.Command(bin, "-probe", d.httpBase()+daemon.PathReadyz).CombinedOutput(); err == nil {
		t.Errorf("-probe of a stopped daemon succeeded: %s", out)
	}
}

// families parses a Prometheus text exposition.
func families(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return mfs
}

// sample returns the value (a histogram's count) of the series of name
// whose labels include labels.
func sample(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	mf := mfs[name]
	if mf == nil {
		return 0
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
	return 0
}

// TestMetrics runs a scripted session (with a plugin deciding), then reads
// /metrics: refused without the token, checked by promtool, and counting
// what the session did.
func TestMetrics(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	plugins := filepath.Join(dir, "plugins")
	pdir := filepath.Join(plugins, "policy")
	os.MkdirAll(pdir, 0o755)
	build(t, pdir, "./testdata/policy", "policy")
	manifest, _ := os.ReadFile("testdata/policy/plugin.json")
	os.WriteFile(filepath.Join(pdir, "plugin.json"), manifest, 0o644)
	d := start(t, bin, "-plugins", plugins)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, d)
	for range 2 {
		if _, err := c.Screenshot(ctx, &client.ScreenshotRequest{Format: aci.FormatJPEG}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Observe(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"echo", "allowed"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"rm", "-rf", "/tmp/nothing-here"}}); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("denied exec: %v", err)
	}
	if _, err := client.Dial(ctx, d.aci, &client.DialOptions{Token: "wrong"}); err == nil {
		t.Fatal("wrong token admitted")
	}
	cast, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cast.Next(ctx); err != nil {
		t.Fatal(err)
	}
	cast.Stop(ctx)

	if code, _ := d.get(t, daemon.PathMetrics, ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %d", code)
	}
	if code, _ := d.get(t, daemon.PathMetrics, "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("/metrics with a wrong token: %d", code)
	}
	code, text := d.get(t, daemon.PathMetrics, "tok")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	promtool(t, text)
	mfs := families(t, text)
	for _, w := range []struct {
		name   string
		labels map[string]string
		n      float64
	}{
		// The test's session and the daemon's own, behind /mcp.
		{"shinken_sessions_open", nil, 2},
		{"shinken_sessions_total", nil, 2},
		{"shinken_hellos_refused_total", map[string]string{"reason": "unauthorized"}, 1},
		{"shinken_action_duration_seconds", map[string]string{"verb": "screenshot", "outcome": "ok"}, 2},
		{"shinken_action_duration_seconds", map[string]string{"verb": "observe", "outcome": "ok"}, 1},
		// The test's exec, and the one the MCP server makes at its start
		// to find what window tools the desktop can carry out (fixed
		// plumbing that runs nothing the agent chose: not judged).
		{"shinken_action_duration_seconds", map[string]string{"verb": "exec", "outcome": "ok"}, 2},
		{"shinken_action_duration_seconds", map[string]string{"verb": "exec", "outcome": "permission_denied"}, 1},
		{"shinken_action_duration_seconds", map[string]string{"verb": "start_screencast", "outcome": "ok"}, 1},
		{"shinken_screenshot_bytes", map[string]string{"format": "jpeg"}, 1},
		{"shinken_observe_nodes", nil, 1},
		{"shinken_exec_duration_seconds", map[string]string{"outcome": "exited"}, 2},
		{"shinken_plugin_decisions_total", map[string]string{"verdict": "allow"}, 1},
		{"shinken_plugin_decisions_total", map[string]string{"verdict": "deny"}, 1},
	} {
		if got := sample(mfs, w.name, w.labels); got != w.n {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.n)
		}
	}
	if sample(mfs, "shinken_screencast_frames_total", map[string]string{"kind": "key"}) < 1 || sample(mfs, "shinken_screencast_bytes_total", nil) <= 0 {
		t.Error("no screencast frame counted")
	}
	if sample(mfs, "process_resident_memory_bytes", nil) <= 0 {
		t.Error("no process metrics")
	}
	d.stop(t)
}

// promtool has promtool check an exposition.
func promtool(t *testing.T, text string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not installed (Debian package prometheus; CI=true: this check must run)")
		}
		t.Skip("skipping: promtool not installed (Debian package prometheus)")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestTokenFile rotates the token through -token-file: the old session is
// closed, the new token works and the old one is refused, with no restart.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	file := filepath.Join(dir, "token")
	// A warm sandbox starts before its claim: no token file yet, every
	// hello refused.
	d := startCmd(t, exec.Command(bin, "-listen", "127.0.0.1:0", "-token-file", file, "-ready-without-token"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := client.Dial(ctx, d.aci, &client.DialOptions{Token: ""}); !errors.Is(err, aci.ErrUnauthorized) {
		t.Fatalf("before the token file: %v", err)
	}
	if code, _ := d.readyz(t); code != 200 {
		t.Fatal("a warm daemon waiting for its token (-ready-without-token) is not ready")
	}
	// Without -ready-without-token, a daemon with no token is not ready:
	// every hello would be refused.
	if code, _ := startCmd(t, exec.Command(bin, "-listen", "127.0.0.1:0", "-token-file", filepath.Join(dir, "none"))).readyz(t); code != http.StatusServiceUnavailable {
		t.Fatalf("a daemon with no token answers /readyz %d, want 503", code)
	}
	os.WriteFile(file, []byte("first\n"), 0o600)
	old := awaitToken(t, ctx, d, "first")
	// Write the new token in place (as kubectl cp or an agent would) and
	// say so with SIGHUP.
	os.WriteFile(file, []byte("second"), 0o600)
	d.cmd.Process.Signal(syscall.SIGHUP)
	awaitToken(t, ctx, d, "second").Close()
	if _, err := old.Screenshot(ctx, nil); !errors.Is(err, aci.ErrClosed) {
		t.Fatalf("session of the old token: %v", err)
	}
	if _, err := client.Dial(ctx, d.aci, &client.DialOptions{Token: "first"}); !errors.Is(err, aci.ErrUnauthorized) {
		t.Fatalf("old token: %v", err)
	}
	d.stop(t)
	if !strings.Contains(d.stderr.String(), "token changed") {
		t.Errorf("the change was not logged:\n%s", d.stderr)
	}
	if strings.Contains(d.stderr.String(), "second") {
		t.Error("the token was logged")
	}
}

// awaitToken dials with token until the daemon has taken it.
func awaitToken(t *testing.T, ctx context.Context, d *running, token string) *client.Client {
	t.Helper()
	proxy := schematest.NewProxy(t, strings.TrimSuffix(d.aci, daemon.PathACI))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := client.Dial(ctx, proxy.URL+daemon.PathACI, &client.DialOptions{Token: token})
		if err == nil {
			return c
		}
		if !errors.Is(err, aci.ErrUnauthorized) || time.Now().After(deadline) {
			t.Fatalf("token %q not taken: %v\n%s", token, err, d.stderr)
		}
		time.Sleep(20 * time.Millisecond) // waiting for the file poll; not synchronisation of the test's own work
	}
}
