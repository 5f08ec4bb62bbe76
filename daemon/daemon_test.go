package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// TestTokenFileInPlace: a token file rewritten in place (truncated, then
// written) is not adopted while it may be half-written, however often it
// is read; it is once it ends with a newline, once it has not changed for
// TokenQuiet, or at a SIGHUP (whoever sends it says it is written).
func TestTokenFileInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	now := time.Now()
	ts := &tokenSource{path: path, now: func() time.Time { return now }}
	write := func(s string, age time.Duration) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
		mt := now.Add(-age)
		os.Chtimes(path, mt, mt)
	}
	for _, tc := range []struct {
		content string
		age     time.Duration
		told    bool
		want    string
		err     error
	}{
		{"", 0, false, "", errTokenIncomplete},        // truncated: being written
		{"new-tok", 0, false, "", errTokenIncomplete}, // half of "new-token", just written
		{"new-tok", 100 * time.Millisecond, false, "", errTokenIncomplete},
		{"new-token\n", 0, false, "new-token", nil},        // complete: it ends with a newline
		{"new-token", TokenQuiet, false, "new-token", nil}, // complete: unchanged for TokenQuiet
		{"new-token", 0, true, "new-token", nil},           // complete: SIGHUP says so
		{"  \n", TokenQuiet, false, "", nil},               // empty: an error of its own
	} {
		write(tc.content, tc.age)
		got, err := ts.read(tc.told)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%q (age %v, told %v): %q, %v; want %v", tc.content, tc.age, tc.told, got, err, tc.err)
		case tc.err == nil && tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%q (age %v, told %v): %q, %v; want %q", tc.content, tc.age, tc.told, got, err, tc.want)
		case tc.want == "" && tc.err == nil && (err == nil || !strings.Contains(err.Error(), "empty")):
			t.Errorf("%q: %q, %v; want the empty file's error", tc.content, got, err)
		}
	}
}

// TestTokenFileInPlaceDaemon: with a daemon following its token file, a
// rewrite in place caught half-written opens no session with the half
// token, and the old token stays in force until the file is complete.
func TestTokenFileInPlaceDaemon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	os.WriteFile(path, []byte("first-token\n"), 0o600)
	lw := newSyncWriter()
	d := startDaemon(t, &Options{TokenFile: path, Logger: slog.New(slog.NewTextHandler(lw, nil))})
	os.WriteFile(path, []byte("second-t"), 0o600) // in place, half of it
	// The watcher has read the half token once it says it did not adopt it.
	lw.await(t, "token file not adopted")
	ctx := context.Background()
	if c, err := client.Dial(ctx, d.Endpoints()[0].ACI, &client.DialOptions{Token: "second-t"}); err == nil {
		c.Close()
		t.Fatal("a session opened with the half-written token")
	}
	c, err := client.Dial(ctx, d.Endpoints()[0].ACI, &client.DialOptions{Token: "first-token"})
	if err != nil {
		t.Fatalf("the token in force was dropped for a half-written one: %v", err)
	}
	c.Close()
	os.WriteFile(path, []byte("second-token\n"), 0o600)
	lw.await(t, "token changed")
	c, err = client.Dial(ctx, d.Endpoints()[0].ACI, &client.DialOptions{Token: "second-token"})
	if err != nil {
		t.Fatalf("the complete token: %v", err)
	}
	c.Close()
}

// startDaemon runs a headless daemon on a loopback port with opts.
func startDaemon(t testing.TB, opts *Options) *Daemon {
	t.Helper()
	if opts.Desktop.Backend == nil {
		opts.Desktop = headlessDesktop(t, "notes", "form")
	}
	if opts.Listen == nil {
		opts.Listen = []string{"127.0.0.1:0"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.NoSignals = true
	d, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return d
}

// base is the daemon's http://host:port.
func base(d *Daemon) string {
	return "http://" + strings.TrimSuffix(strings.TrimPrefix(d.Endpoints()[0].ACI, "ws://"), PathACI)
}

func get(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestGuard: /aci, /mcp, /inspect and /metrics refuse a Host the daemon does not
// answer to and another site's Origin, with 403 before any token is
// read; the page's own origin, a configured name and a client with no
// Origin pass. /healthz and /readyz, which probes reach by any name,
// are not guarded.
func TestGuard(t *testing.T) {
	d := startDaemon(t, &Options{Token: "tok", MCP: &mcpserver.Options{}, Page: true, Hosts: []string{"sandbox.ns.svc"}, Metrics: &MetricsOptions{}})
	b := base(d)
	own := b // the page's origin is the daemon's
	for _, tc := range []struct {
		path   string
		header map[string]string
		want   int
	}{
		{PathMCP, map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{PathACI, map[string]string{"Host": "evil.example:7040"}, http.StatusForbidden},
		{PathInspect, map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{PathMCP, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{PathACI, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{PathInspect, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{PathMetrics, map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{PathMetrics, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{PathACI, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{PathMetrics, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{PathACI, map[string]string{"Origin": "https" + strings.TrimPrefix(own, "http")}, http.StatusForbidden},
		// Past the guard: the token's refusal, or a WebSocket's.
		{PathMCP, map[string]string{"Host": "sandbox.ns.svc"}, http.StatusUnauthorized},
		{PathMCP, map[string]string{"Origin": own}, http.StatusUnauthorized},
		{PathMCP, nil, http.StatusUnauthorized},
		{PathMetrics, nil, http.StatusUnauthorized},
		{PathMetrics, map[string]string{"Origin": own}, http.StatusUnauthorized},
		{PathACI, map[string]string{"Origin": own}, http.StatusUpgradeRequired},
		{PathReadyz, map[string]string{"Host": "evil.example"}, http.StatusOK},
		{PathHealthz, map[string]string{"Host": "evil.example"}, http.StatusOK},
	} {
		resp, body := get(t, b+tc.path, tc.header)
		if resp.StatusCode != tc.want {
			t.Errorf("%s %v: %d %q, want %d", tc.path, tc.header, resp.StatusCode, body, tc.want)
		}
	}
}

// TestMetricsListenGuard: /metrics on a listener of its own, which asks
// no token, is behind the same Host and Origin guard.
func TestMetricsListenGuard(t *testing.T) {
	d := startDaemon(t, &Options{Token: "tok", Metrics: &MetricsOptions{Listen: "127.0.0.1:0"}})
	url := d.Endpoints()[0].Metrics
	for _, tc := range []struct {
		header map[string]string
		want   int
	}{
		{nil, http.StatusOK},
		{map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	} {
		if resp, body := get(t, url, tc.header); resp.StatusCode != tc.want {
			t.Errorf("%s %v: %d %q, want %d", url, tc.header, resp.StatusCode, body, tc.want)
		}
	}
}

// TestPageHeaders: the page may not be framed by another site.
func TestPageHeaders(t *testing.T) {
	d := startDaemon(t, &Options{Token: "tok", Page: true})
	resp, body := get(t, base(d)+"/", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<canvas") {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if xfo := resp.Header.Get("X-Frame-Options"); xfo != "DENY" {
		t.Errorf("X-Frame-Options %q", xfo)
	}
}

// TestReadyzReason: a failing check's detail (a process's stderr, with
// pids) goes to the log; /readyz says which part and why in words.
func TestReadyzReason(t *testing.T) {
	lw := newSyncWriter()
	detail := errors.New("dbus-daemon[4242]: uid 1000: Failed to start message bus")
	fail := make(chan error, 1)
	fail <- nil
	check := func(context.Context) error {
		err := <-fail
		fail <- err
		return err
	}
	d := startDaemon(t, &Options{
		Token:  "tok",
		Logger: slog.New(slog.NewTextHandler(lw, nil)),
		Ready: []Check{
			{Name: "the session bus", Func: check},
		},
	})
	readyz := func() (int, readinessBody) {
		resp, body := get(t, base(d)+PathReadyz, nil)
		var r readinessBody
		json.Unmarshal([]byte(body), &r)
		return resp.StatusCode, r
	}
	if code, r := readyz(); code != http.StatusOK || !r.Ready {
		t.Fatalf("ready: %d %+v", code, r)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{detail, "the session bus is not ready (the daemon's log says why)"},
		{NotReady("the session bus", "does not answer", detail), "the session bus does not answer"},
	} {
		<-fail
		fail <- tc.err
		d.ready.runChecks(context.Background())
		code, r := readyz()
		if code != http.StatusServiceUnavailable || r.Reason != tc.want {
			t.Errorf("%v: %d %+v, want %q", tc.err, code, r, tc.want)
		}
		if strings.Contains(r.Reason, "4242") {
			t.Errorf("the reason holds the detail: %q", r.Reason)
		}
	}
	lw.await(t, "4242")
}

// syncWriter is a log writer safe for the daemon's goroutines and the
// test, which can wait for a line.
type syncWriter struct {
	mu      sync.Mutex
	w       strings.Builder
	written chan struct{} // closed and replaced at each write
}

func newSyncWriter() *syncWriter { return &syncWriter{written: make(chan struct{})} }

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.written)
	s.written = make(chan struct{})
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// await waits until the log holds substr.
func (s *syncWriter) await(t *testing.T, substr string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		s.mu.Lock()
		found, written := strings.Contains(s.w.String(), substr), s.written
		s.mu.Unlock()
		if found {
			return
		}
		select {
		case <-written:
		case <-deadline:
			t.Fatalf("the log never said %q:\n%s", substr, s.String())
		}
	}
}

// waitReadyz asks /readyz until it answers code, and returns its body;
// readiness, not time, says when the daemon has moved on. The bound is a
// hang guard.
func waitReadyz(t *testing.T, d *Daemon, code int) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, body := get(t, base(d)+PathReadyz, nil)
		if resp.StatusCode == code {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered %d: last %d %s", code, resp.StatusCode, body)
		}
	}
}

// drainRig runs a daemon with opts (on a loopback port, token "tok", no
// signals) until cancel, Run's error then coming on done, and opens a
// session on it, closed when the test ends: the drain tests' rig.
func drainRig(t *testing.T, opts *Options) (*Daemon, *client.Client, context.CancelFunc, <-chan error) {
	t.Helper()
	opts.Listen, opts.Token, opts.NoSignals = []string{"127.0.0.1:0"}, "tok", true
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	d, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	c, err := client.Dial(context.Background(), d.Endpoints()[0].ACI, &client.DialOptions{Token: "tok"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return d, c, cancel, done
}

// TestDrainDelay: once a shutdown begins, /readyz answers 503 at once,
// and for DrainDelay new sessions are still accepted (a load balancer may
// still route to the daemon); Close ends the wait.
func TestDrainDelay(t *testing.T) {
	d, err := New(context.Background(), &Options{
		Desktop: headlessDesktop(t, "notes"), Listen: []string{"127.0.0.1:0"}, Token: "tok",
		DrainDelay: time.Hour, NoSignals: true, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	cancel()
	// Readiness decides: the drain has begun once /readyz says so.
	if body := waitReadyz(t, d, http.StatusServiceUnavailable); !strings.Contains(body, "draining") {
		t.Fatalf("/readyz: %s", body)
	}
	c, err := client.Dial(context.Background(), d.Endpoints()[0].ACI, &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatalf("a new session during the drain delay: %v", err)
	}
	if _, err := c.Screenshot(context.Background(), nil); err != nil {
		t.Errorf("a call during the drain delay: %v", err)
	}
	c.Close()
	d.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestDrainOrder: at the end of Run's ctx, /readyz answers 503 while a
// call is still in flight; the call finishes and its answer arrives; then
// the plugins get their shutdown, and only then is the desktop closed.
func TestDrainOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	desk := headlessDesktop(t, "notes")
	desk.Close = func() { note("desktop") }
	d, c, cancel, done := drainRig(t, &Options{Desktop: desk, DrainTimeout: time.Minute,
		Plugins: &Plugins{Go: []GoPlugin{allowingPlugin(t, func() { note("plugins") })}}})
	// The call in flight says it started, then waits for the test to have
	// seen the drain begin: both through FIFOs, which block until the
	// other end opens.
	tmp := t.TempDir()
	gate, started := filepath.Join(tmp, "go"), filepath.Join(tmp, "started")
	for _, f := range []string{gate, started} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	result := make(chan error, 1)
	go func() {
		res, err := c.Exec(context.Background(), &aci.ExecRequest{Shell: "echo > " + started + "; read x < " + gate + "; echo finished"})
		if err == nil && res.Stdout != "finished\n" {
			err = errors.New("the call in flight printed " + res.Stdout)
		}
		result <- err
	}()
	if _, err := os.ReadFile(started); err != nil {
		t.Fatal(err)
	}
	cancel()
	waitReadyz(t, d, http.StatusServiceUnavailable)
	mu.Lock()
	early := slices.Clone(order)
	mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("closed before the call in flight finished: %v", early)
	}
	if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatalf("the call in flight: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := []string{"plugins", "desktop"}; !slices.Equal(order, want) {
		t.Fatalf("closed in the order %v, want %v", order, want)
	}
	if _, err := c.Screenshot(context.Background(), nil); err == nil {
		t.Fatal("the session is still open after the drain")
	}
}

// TestSwap: while a new desktop opens the daemon is unready; then new
// sessions see the new desktop, the old ones are closed, and the daemon
// is ready again; a desktop that fails to open leaves it unready.
func TestSwap(t *testing.T) {
	d := startDaemon(t, &Options{Token: "tok", Desktop: headlessDesktop(t, "notes")})
	status := func() (int, string) {
		resp, body := get(t, base(d)+PathReadyz, nil)
		return resp.StatusCode, body
	}
	old, err := client.Dial(context.Background(), d.Endpoints()[0].ACI, &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	opening, release := make(chan struct{}), make(chan struct{})
	swapped := make(chan error)
	go func() {
		swapped <- d.Swap(func() (Desktop, error) {
			close(opening)
			<-release
			return headlessDesktop(t, "form"), nil
		})
	}()
	<-opening
	if code, body := status(); code != http.StatusServiceUnavailable || !strings.Contains(body, "reopened") {
		t.Fatalf("while the desktop reopens: %d %s", code, body)
	}
	close(release)
	if err := <-swapped; err != nil {
		t.Fatal(err)
	}
	// The checks run again after a swap: readiness decides.
	waitReadyz(t, d, http.StatusOK)
	if _, err := old.Screenshot(context.Background(), nil); err == nil {
		t.Error("a session of the old desktop is still open")
	}
	c, err := client.Dial(context.Background(), d.Endpoints()[0].ACI, &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ws, err := c.ListWindows(context.Background()); err != nil || len(ws) != 1 || !strings.EqualFold(ws[0].Title, "form") {
		t.Fatalf("windows of the new desktop: %+v %v", ws, err)
	}
	if err := d.Swap(func() (Desktop, error) { return Desktop{}, errors.New("no X server") }); err == nil {
		t.Fatal("a failed swap returned no error")
	}
	if code, _ := status(); code != http.StatusServiceUnavailable {
		t.Fatalf("ready after a failed swap: %d", code)
	}
}

// TestDrainKillsCommands: a command still running when DrainTimeout
// passes is killed with its session, and the daemon stops.
func TestDrainKillsCommands(t *testing.T) {
	before, _ := procfs.Descendants(os.Getpid())
	_, c, cancel, done := drainRig(t, &Options{Desktop: headlessDesktop(t, "notes"), DrainTimeout: 100 * time.Millisecond})
	started := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecStream(context.Background(), &aci.ExecRequest{Shell: "echo > " + started + "; exec sleep 1000"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(started); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	after, _ := procfs.Descendants(os.Getpid())
	for _, pid := range after {
		if !slices.Contains(before, pid) {
			argv, _ := procfs.Cmdline(pid)
			t.Errorf("left running after the drain: %d %q", pid, argv)
		}
	}
}

// TestReadyNeedsToken: while the token file does not exist no hello can
// succeed, so /readyz says not ready, and why; once the file holds a
// token the daemon is ready.
func TestReadyNeedsToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	d := startDaemon(t, &Options{TokenFile: path})
	if body := waitReadyz(t, d, http.StatusServiceUnavailable); !strings.Contains(body, "no token is loaded") {
		t.Fatalf("/readyz without a token: %s", body)
	}
	if err := os.WriteFile(path, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, d, http.StatusOK)
}
