package mcpserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/mcpserver"
)

// TestHTTPDeleteEndsCallsInFlight ends an MCP session with DELETE while
// its shell runs a command far longer than the test: the SDK's close
// waits for the calls in flight, so the Server cancels them first; the
// DELETE is answered, the session ends and the call answers an error.
func TestHTTPDeleteEndsCallsInFlight(t *testing.T) {
	e := newEnv(t, &mcpserver.Options{HTTPSessionIdle: time.Hour})
	hs := httptest.NewServer(e.srv.Handler(token))
	t.Cleanup(func() {
		e.srv.Close()
		hs.Close()
	})
	ctx := t.Context()
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	defer hc.CloseIdleConnections()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: hs.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	started := filepath.Join(t.TempDir(), "started")
	answered := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
			"input": fmt.Sprintf("touch %s; sleep 1000", started), "wait_ms": 240000}})
		if err == nil && !res.IsError {
			err = fmt.Errorf("answered %+v", res.StructuredContent)
		}
		answered <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for _, err := os.Stat(started); err != nil; _, err = os.Stat(started) {
		if time.Now().After(deadline) {
			t.Fatal("the shell never ran the command")
		}
		time.Sleep(10 * time.Millisecond) // polling for the command's start, within the hang guard
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, hs.URL, nil)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	waitSessions(t, e.srv, 0)
	if err := <-answered; err == nil {
		t.Fatal("the call in flight answered no error")
	}
}
