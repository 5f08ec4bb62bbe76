package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/mcpserver"
)

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// rawSession opens an MCP session by hand over hc and returns its id and
// the answer's status (and body, when it is not 200).
func rawSession(t *testing.T, hc *http.Client, url string) (id string, status int, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", resp.StatusCode, string(b)
	}
	id = resp.Header.Get("Mcp-Session-Id")
	for _, msg := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return id, http.StatusOK, ""
}

// TestHTTPSessionsBounded opens sessions up to MaxHTTPSessions: the next
// is refused with 429 and a JSON-RPC error that names the bound, and one
// ended with DELETE frees a place.
func TestHTTPSessionsBounded(t *testing.T) {
	e := newEnv(t, &mcpserver.Options{MaxHTTPSessions: 3, HTTPSessionIdle: time.Hour})
	hs := httptest.NewServer(e.srv.Handler(token))
	t.Cleanup(func() {
		e.srv.Close()
		hs.Close()
	})
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	var ids []string
	for range 3 {
		id, status, body := rawSession(t, hc, hs.URL)
		if status != http.StatusOK {
			t.Fatalf("a session under the bound: %d %s", status, body)
		}
		ids = append(ids, id)
	}
	_, status, body := rawSession(t, hc, hs.URL)
	var msg struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if status != http.StatusTooManyRequests || json.Unmarshal([]byte(body), &msg) != nil || !strings.Contains(msg.Error.Message, "too many MCP sessions") {
		t.Fatalf("a session past the bound: %d %s", status, body)
	}
	req, _ := http.NewRequest("DELETE", hs.URL, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", ids[0])
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The place comes free once the session has ended: try until it has
	// (each try is refused or opens one), within a hang guard.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, status, body := rawSession(t, hc, hs.URL)
		if status == http.StatusOK {
			break
		}
		if status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after a DELETE: %d %s", status, body)
		}
		runtime.Gosched()
	}
}

// TestHTTPSessionsExpire opens many sessions, starts a shell in some, and
// abandons them all: once idle past HTTPSessionIdle each has ended, with
// its shell's ACI session, and the goroutines are back to what they were.
func TestHTTPSessionsExpire(t *testing.T) {
	const idle = 2 * time.Second // short for the test; long enough that a busy machine does not expire a session between two of its calls
	e := newEnv(t, &mcpserver.Options{MaxHTTPSessions: 200, HTTPSessionIdle: idle})
	hs := httptest.NewServer(e.srv.Handler(token))
	t.Cleanup(func() {
		e.srv.Close()
		hs.Close()
	})
	hc := &http.Client{}
	// A first session and its ending, so that what the server starts once
	// (pools, the SDK's) is in the baseline.
	rawSession(t, hc, hs.URL)
	waitSessions(t, e.srv, 0)
	hc.CloseIdleConnections()
	base := runtime.NumGoroutine()
	ctx := t.Context()
	var clients []*mcp.ClientSession
	for i := range 100 {
		if i%20 == 0 {
			// A session with a shell, through the SDK's client.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"input": "X=1\n", "wait_ms": 100}})
			if err != nil || res.IsError {
				t.Fatalf("shell: %v %v", err, res)
			}
			clients = append(clients, cs)
			continue // abandoned: closed only once the server has ended it
		}
		if _, status, body := rawSession(t, hc, hs.URL); status != http.StatusOK {
			t.Fatalf("session %d: %d %s", i, status, body)
		}
	}
	waitSessions(t, e.srv, 0)
	// The clients' side of the abandoned sessions (goroutines of this
	// test process too): their DELETE finds nothing left to end.
	for _, cs := range clients {
		cs.Close()
	}
	hc.CloseIdleConnections()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(2 * time.Minute)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before the sessions:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond) // polling the count, within the hang guard
	}
	// And the bound's count came back too: 200 sessions open again.
	for i := range 200 {
		if _, status, body := rawSession(t, hc, hs.URL); status != http.StatusOK {
			t.Fatalf("session %d after the expiry: %d %s", i, status, body)
		}
	}
	hc.CloseIdleConnections()
}

// waitSessions waits, within a hang guard, until srv serves n MCP
// sessions besides the in-memory one newEnv connects.
func waitSessions(t *testing.T, srv *mcpserver.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := 0
		for range srv.MCP().Sessions() {
			got++
		}
		if got-1 == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions, want %d", got-1, n)
		}
		time.Sleep(10 * time.Millisecond) // polling the state, within the hang guard
	}
}
