package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rotatingBearer sends the token it holds now with every request.
type rotatingBearer struct{ token atomic.Pointer[string] }

func (b *rotatingBearer) set(token string) { b.token.Store(&token) }

func (b *rotatingBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+*b.token.Load())
	return http.DefaultTransport.RoundTrip(r)
}

// mcpStatus is the status /mcp answers an initialize with token.
func mcpStatus(t *testing.T, url, token string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// toolOK calls a tool that must succeed.
func toolOK(t *testing.T, ctx context.Context, sess *mcp.ClientSession, name string, args map[string]any) {
	t.Helper()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s %v: %v", name, args, res.Content[0].(*mcp.TextContent).Text)
	}
}

// TestMCPHTTPTokenFile serves /mcp from a daemon that starts before its
// token exists (-token-file, a warm sandbox before its claim): refused
// until the token appears, then served with no restart; after a rotation
// the same MCP session goes on with the new token, and the old one is
// refused.
func TestMCPHTTPTokenFile(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	file := filepath.Join(dir, "token")
	d := startCmd(t, exec.Command(bin, "-listen", "127.0.0.1:0", "-token-file", file))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := mcpURL(d.aci)
	if code := mcpStatus(t, url, "first"); code != http.StatusUnauthorized {
		t.Fatalf("/mcp before the token: %d, want 401", code)
	}
	os.WriteFile(file, []byte("first\n"), 0o600)
	awaitToken(t, ctx, d, "first").Close()
	bearer := &rotatingBearer{}
	bearer.set("first")
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	toolOK(t, ctx, sess, "list_windows", map[string]any{})
	toolOK(t, ctx, sess, "left_click", map[string]any{"coordinate": []int{500, 500}})

	os.WriteFile(file, []byte("second\n"), 0o600)
	d.cmd.Process.Signal(syscall.SIGHUP)
	awaitToken(t, ctx, d, "second").Close()
	bearer.set("second")
	toolOK(t, ctx, sess, "screenshot", map[string]any{})
	toolOK(t, ctx, sess, "observe", map[string]any{})
	toolOK(t, ctx, sess, "list_windows", map[string]any{})
	if code := mcpStatus(t, url, "first"); code != http.StatusUnauthorized {
		t.Fatalf("/mcp with the old token: %d, want 401", code)
	}
	sess.Close()
	d.stop(t)
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMCPStdioTokenFile starts -mcp stdio -token-file before the file
// exists, then rotates the token: its in-process ACI session is closed
// with the old token and the daemon
// reconnects it with the new one before it logs the change, so the next
// call, an input one, works the first time.
func TestMCPStdioTokenFile(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	file := filepath.Join(dir, "token")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Started before its token file exists, it serves at once.
	cmd := exec.Command(bin, "-mcp", "stdio", "-token-file", file)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	click := map[string]any{"coordinate": []int{500, 500}}
	toolOK(t, ctx, sess, "left_click", click)
	for i, token := range []string{"first", "second", "third"} {
		os.WriteFile(file, []byte(token), 0o600)
		cmd.Process.Signal(syscall.SIGHUP)
		// The daemon logs the change once its sessions follow it.
		deadline := time.Now().Add(20 * time.Second)
		for strings.Count(stderr.String(), "token changed") <= i {
			if time.Now().After(deadline) {
				t.Fatalf("the token change to %q was not logged\n%s", token, stderr)
			}
			time.Sleep(10 * time.Millisecond) // waiting for the daemon's log; not synchronisation of the test's own work
		}
		toolOK(t, ctx, sess, "left_click", click)
		toolOK(t, ctx, sess, "screenshot", map[string]any{})
	}
	if err := sess.Close(); err != nil {
		t.Fatalf("close: %v\n%s", err, stderr)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("the daemon did not exit cleanly: %v\n%s", cmd.ProcessState, stderr)
	}
}
