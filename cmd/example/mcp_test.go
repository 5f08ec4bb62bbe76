package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
)

// nodeSDK finds node and the official TypeScript MCP SDK, which the test
// command installs into .npm at the repository's root. Their absence fails
// the test: it must run wherever the tests run.
func nodeSDK(t *testing.T) (node, modules string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed (scripts/test installs it)")
	}
	modules, err = filepath.Abs(filepath.Join("..", "..", ".npm", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed in %s (scripts/test installs it): %v", modules, err)
	}
	return node, modules
}

// runNode runs the TypeScript SDK client script and fails the test with its
// output when it fails.
func runNode(t *testing.T, args ...string) string {
	t.Helper()
	node, modules := nodeSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "mcp_client.cjs")}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	if !strings.HasSuffix(strings.TrimSpace(out.String()), "ok") {
		t.Fatalf("node %s did not finish:\n%s", strings.Join(args, " "), out.String())
	}
	return out.String()
}

// TestMCPTypeScript drives the daemon with the official TypeScript MCP SDK:
// over stdio (the SDK starts the daemon with -mcp stdio), then over
// streamable HTTP at /mcp, with and without the token.
func TestMCPTypeScript(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	t.Run("stdio", func(t *testing.T) {
		out := runNode(t, "stdio", bin, "tok")
		t.Log(out)
	})
	t.Run("http", func(t *testing.T) {
		d := start(t, bin)
		out := runNode(t, "http", mcpURL(d.aci), "tok")
		t.Log(out)
		d.stop(t)
	})
}

// TestMCPStdioGo drives -mcp stdio with the Go SDK's client: the daemon's
// stdout carries MCP alone, and closing stdin ends it cleanly.
func TestMCPStdioGo(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "-mcp", "stdio", "-token", "tok", "-mcp-screen", "640x480")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil)
	sess, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "list_windows", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_windows: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"title":"Form"`) {
		t.Fatalf("windows %s", b)
	}
	// -mcp-screen 640x480: the 1280×800 screen is shown at 640×400.
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("screenshot: %v %+v", err, res)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(res.Content[0].(*mcp.ImageContent).Data))
	if err != nil || cfg.Width != 640 || cfg.Height != 400 {
		t.Fatalf("screenshot %dx%d (%v), want 640x400", cfg.Width, cfg.Height, err)
	}
	if err := sess.Close(); err != nil {
		t.Fatalf("close: %v\n%s", err, stderr.String())
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("the daemon did not exit cleanly: %v\n%s", cmd.ProcessState, stderr.String())
	}
}

// TestMCPHTTPToken checks /mcp refuses requests without the token, or with
// another, before any MCP handling.
func TestMCPHTTPToken(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	d := start(t, bin)
	url := mcpURL(d.aci)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	for _, auth := range []string{"", "Bearer nope", "Basic dG9rOnRvaw==", "Bearer tok"} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := http.StatusUnauthorized
		if auth == "Bearer tok" {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Fatalf("Authorization %q: status %d, want %d: %s", auth, resp.StatusCode, want, got)
		}
		if want == http.StatusOK && !strings.Contains(string(got), `"serverInfo"`) {
			t.Fatalf("initialize answered %s", got)
		}
	}
	d.stop(t)
}

// TestMCPRemote serves MCP on stdio for a daemon elsewhere (-remote): the
// tools drive that daemon's desktop, and a wrong token is refused at once.
func TestMCPRemote(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	d := start(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Through a proxy that validates every message the runtime sends.
	proxy := schematest.NewProxy(t, strings.TrimSuffix(d.aci, "/aci"))
	cmd := exec.Command(bin, "-mcp", "stdio", "-remote", proxy.URL+"/aci", "-token", "tok")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, call := range []mcp.CallToolParams{
		{Name: "launch_app", Arguments: map[string]any{"app": "notes"}},
		{Name: "screenshot", Arguments: map[string]any{}},
		{Name: "observe", Arguments: map[string]any{}},
		{Name: "left_click", Arguments: map[string]any{"coordinate": []int{500, 500}}},
		{Name: "exec", Arguments: map[string]any{"argv": []string{"echo", "remote"}}},
	} {
		res, err := sess.CallTool(ctx, &call)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", call.Name, err, res)
		}
	}
	if text, _ := proxy.Counts(); text < 5 {
		t.Fatalf("the proxy saw %d messages from the runtime", text)
	}
	// The remote daemon has three windows now, as its own ACI shows.
	c := dial(t, ctx, d)
	if ws, err := c.ListWindows(ctx); err != nil || len(ws) != 3 {
		t.Fatalf("the remote desktop has %d windows (%v), want 3", len(ws), err)
	}
	c.Close()
	if err := sess.Close(); err != nil {
		t.Fatalf("close: %v\n%s", err, stderr.String())
	}

	bad := exec.Command(bin, "-mcp", "stdio", "-remote", d.aci, "-token", "wrong")
	out, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unauthorized") {
		t.Fatalf("a wrong token: %v\n%s", err, out)
	}
	d.stop(t)
}

// TestMCPFlags checks the -mcp and -remote values the daemon refuses.
func TestMCPFlags(t *testing.T) {
	for _, tc := range []struct {
		cfg config
		ok  bool
	}{
		{config{}, true},
		{config{mcp: "stdio"}, true},
		{config{mcp: "stdio", remote: "ws://h/aci"}, true},
		{config{mcp: "http"}, false},
		{config{remote: "ws://h/aci"}, false},
		{config{mcp: "stdio", remote: "ws://h/aci", plugins: "p"}, false},
	} {
		if err := checkMCPFlags(tc.cfg); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.cfg, err)
		}
	}
	for size, ok := range map[string]bool{"1024x768": true, "1280x800": true, "big": false, "10x10": false} {
		if _, err := mcpOptions(config{mcpSize: size}, nil); (err == nil) != ok {
			t.Errorf("-mcp-screen %s: %v", size, err)
		}
	}
}

// mcpURL is the MCP endpoint beside the ACI one the daemon printed.
func mcpURL(aciURL string) string {
	return strings.Replace(strings.TrimSuffix(aciURL, "/aci"), "ws://", "http://", 1) + "/mcp"
}

// TestMCPX11 drives a real GTK app on a real X session through -mcp stdio
// -backend x11: wait_for zenity's entry and OK button in its
// accessibility tree, set the entry by its ref, take a screenshot at the
// model's scale, and click OK with the Anthropic left_click at the
// button's centre mapped into the screenshot; zenity prints the value.
func TestMCPX11(t *testing.T) {
	sess := atspitest.Start(t)
	bin := build(t, t.TempDir(), ".", "example")
	zenity := sess.Launch(t, "zenity", "--entry", "--title", "Shinken", "--text", "Your name?")

	cmd := exec.Command(bin, "-mcp", "stdio", "-token", "tok", "-backend", "x11")
	cmd.Env = append(sess.Env(), "AT_SPI_BUS_ADDRESS="+sess.A11yBus)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	mc, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	defer mc.Close()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := mc.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s %v: %v %+v\n%s", name, args, err, res, stderr.String())
		}
		return res
	}
	type element struct {
		Ref  string    `json:"ref"`
		BBox []float64 `json:"bbox"`
	}
	waitFor := func(args map[string]any) element {
		t.Helper()
		args["timeout_ms"] = 20000
		args["desktop"] = true
		var out struct{ Element element }
		b, _ := json.Marshal(call("wait_for", args).StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || out.Element.Ref == "" {
			t.Fatalf("wait_for %v: %s %v", args, b, err)
		}
		return out.Element
	}
	entry := waitFor(map[string]any{"role": "text"})
	call("set_value", map[string]any{"ref": entry.Ref, "value": "Grace Hopper ✓"})

	shot := call("screenshot", map[string]any{})
	img, ok2 := shot.Content[0].(*mcp.ImageContent)
	if !ok2 || img.MIMEType != "image/png" || len(img.Data) < 1000 {
		t.Fatalf("screenshot: %+v", shot.Content)
	}
	// The button where it is now (the window manager may have moved the
	// window since it first showed). The session's screen is 1280×800;
	// the model's, 1024×640.
	ok := waitFor(map[string]any{"role": "push button", "name": "OK"})
	x := int((ok.BBox[0] + ok.BBox[2]/2) * 1024 / 1280)
	y := int((ok.BBox[1] + ok.BBox[3]/2) * 640 / 800)
	call("left_click", map[string]any{"coordinate": []int{x, y}})
	select {
	case <-zenity.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("zenity did not exit after left_click on OK")
	}
	if got := strings.TrimSpace(zenity.Stdout()); got != "Grace Hopper ✓" {
		t.Fatalf("zenity printed %q", got)
	}
}

// TestMCPHTTPShutdown stops the daemon while an MCP client holds an HTTP
// session open: SIGTERM ends the session and the daemon exits cleanly.
func TestMCPHTTPShutdown(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	d := start(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := &http.Client{Transport: bearerTransport{"tok"}}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: mcpURL(d.aci), HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "observe", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("observe: %v %+v", err, res)
	}
	stopped := time.Now()
	d.stop(t)
	t.Logf("stopped in %v", time.Since(stopped))
}

// bearerTransport sends the token with every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPStdioSIGTERM stops -mcp stdio with SIGTERM while its client is
// connected: it exits cleanly, having logged no error.
func TestMCPStdioSIGTERM(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	cmd := exec.Command(bin, "-mcp", "stdio", "-token", "tok")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo"`) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("initialize: %q %v\n%s", line, err, stderr.String())
	}
	go func() { exited <- cmd.Wait() }()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("no exit 20 s after SIGTERM\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Fatalf("an error logged on a clean stop:\n%s", stderr.String())
	}
}
