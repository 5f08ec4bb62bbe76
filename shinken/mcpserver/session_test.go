package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// movingRuntime is a runtime whose token rotates and whose desktop is
// replaced, as a daemon's are, and a Dial that follows both.
type movingRuntime struct {
	t *testing.T

	mu    sync.Mutex
	url   string
	token string
	rt    *shinken.Runtime
	hs    *httptest.Server
}

// open serves a new desktop with the apps and closes the previous one, as
// a desktop restart does.
func (m *movingRuntime) open(apps ...string) {
	desk := headless.New(&headless.Options{Width: 1280, Height: 800})
	for _, app := range apps {
		if err := desk.Launch(context.Background(), app, nil); err != nil {
			m.t.Fatal(err)
		}
	}
	m.mu.Lock()
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: m.token})
	hs := httptest.NewServer(rt)
	oldRT, oldHS := m.rt, m.hs
	m.rt, m.hs = rt, hs
	m.url = schematest.NewProxy(m.t, "ws"+strings.TrimPrefix(hs.URL, "http")).URL
	m.mu.Unlock()
	if oldRT != nil {
		oldRT.Close()
		oldHS.Close()
	}
}

func (m *movingRuntime) setToken(token string) {
	m.mu.Lock()
	m.token = token
	rt := m.rt
	m.mu.Unlock()
	rt.SetToken(token)
}

func (m *movingRuntime) dial(ctx context.Context) (*client.Client, error) {
	m.mu.Lock()
	url, token := m.url, m.token
	m.mu.Unlock()
	return client.Dial(ctx, url, &client.DialOptions{Token: token})
}

func (m *movingRuntime) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rt.Close()
	m.hs.Close()
}

// TestReconnect rotates the runtime's token and replaces its desktop under
// an MCP session: the tools keep working, by themselves (a reading call
// is made again on a new ACI session; an input call in flight fails, the
// next one works) or when the program says so with Reconnect.
func TestReconnect(t *testing.T) {
	ctx := context.Background()
	m := &movingRuntime{t: t, token: "one"}
	m.open("notes", "form")
	defer m.close()
	first, err := m.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	srv, err := mcpserver.New(ctx, first, &mcpserver.Options{Dial: m.dial})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sess, done := connectInMemory(t, ctx, srv, nil)
	defer done()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	ok := func(name string, args map[string]any) string {
		t.Helper()
		res := call(name, args)
		if res.IsError {
			t.Fatalf("%s %v: %s", name, args, text(res))
		}
		return text(res)
	}
	ok("observe", map[string]any{})
	click := map[string]any{"coordinate": []int{500, 500}}

	// A rotation nobody announces: the next screenshot reads on a new
	// session, and input works after it.
	m.setToken("two")
	ok("screenshot", map[string]any{})
	ok("left_click", click)

	// An input call finds the session closed: it fails (it may or may not
	// have reached the runtime) or, had it been answered before the close,
	// succeeds; the next one works either way.
	m.setToken("three")
	if res := call("left_click", click); res.IsError && res.Meta[mcpserver.ErrorCodeMeta] != string(aci.CodeClosed) {
		t.Fatalf("left_click on a closed session: %s", text(res))
	}
	ok("left_click", click)

	// Announced: the first call after Reconnect runs on the new session.
	m.setToken("four")
	if err := srv.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	ok("left_click", click)

	// A new desktop: refs from the old one are stale; the windows are the
	// new desktop's.
	tree := ok("observe", map[string]any{})
	m.open("notes")
	if err := srv.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	ref := strings.Fields(strings.TrimSpace(strings.Split(tree, "\n")[1]))[0]
	if res := call("click_element", map[string]any{"ref": ref}); !res.IsError || res.Meta[mcpserver.ErrorCodeMeta] != string(aci.CodeStaleElementRef) {
		t.Fatalf("a ref of the old desktop: %s", text(res))
	}
	if w := ok("list_windows", map[string]any{}); strings.Contains(w, "Form") || !strings.Contains(w, "Notes") {
		t.Fatalf("windows of the new desktop:\n%s", w)
	}
	// And a desktop replaced unannounced: a reading call follows it.
	m.open("form")
	if w := ok("list_windows", map[string]any{}); !strings.Contains(w, "Form") {
		t.Fatalf("windows of the newest desktop:\n%s", w)
	}
}

// TestTokenHandler serves MCP over HTTP with a token that rotates: a
// request takes the token in force when it arrives.
func TestTokenHandler(t *testing.T) {
	e := newEnv(t, nil)
	var mu sync.Mutex
	current := ""
	hs := httptest.NewServer(e.srv.TokenHandler(func() string {
		mu.Lock()
		defer mu.Unlock()
		return current
	}))
	defer hs.Close()
	defer e.srv.Close()
	status := func(token string) int {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
		req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
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
	set := func(token string) {
		mu.Lock()
		current = token
		mu.Unlock()
	}
	for _, step := range []struct {
		current, sent string
		want          int
	}{
		{"", "", http.StatusUnauthorized},
		{"a", "a", http.StatusOK},
		{"b", "a", http.StatusUnauthorized},
		{"b", "b", http.StatusOK},
	} {
		set(step.current)
		if got := status(step.sent); got != step.want {
			t.Errorf("token %q in force, %q sent: %d, want %d", step.current, step.sent, got, step.want)
		}
	}
}
