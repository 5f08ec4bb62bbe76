package daemon

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/mcpserver"
)

// headlessDesktop is a desktop of the daemon with the apps running.
func headlessDesktop(t testing.TB, apps ...string) Desktop {
	t.Helper()
	desk := headless.New(&headless.Options{Width: 1280, Height: 800})
	for _, app := range apps {
		if err := desk.Launch(context.Background(), app, nil); err != nil {
			t.Fatal(err)
		}
	}
	return Desktop{Backend: desk}
}

// TestMCPFollowsDaemon rotates the daemon's token and swaps its desktop
// under an MCP session: its ACI session follows both before the next call,
// so that call, an input one included, works the first time.
func TestMCPFollowsDaemon(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	srv := newServed(headlessDesktop(t, "notes", "form"), shinken.RuntimeOptions{Token: "one", Logger: log}, log)
	defer srv.closeDesktop()
	defer func() { srv.current().Close() }()
	mcpd := newMCPDaemon(srv, mcpserver.Options{Logger: log})
	m, err := mcpd.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mcpd.close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := m.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sess.Close()
		ss.Wait()
	}()
	ok := func(name string, args map[string]any) string {
		t.Helper()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("%s %v: %s", name, args, b.String())
		}
		return b.String()
	}
	click := map[string]any{"coordinate": []int{500, 500}}
	ok("left_click", click)

	srv.setToken("two")
	ok("left_click", click)
	ok("key", map[string]any{"text": "Return"})

	swap(srv, headlessDesktop(t, "notes"))
	ok("left_click", click)
	if w := ok("list_windows", map[string]any{}); strings.Contains(w, "Form") || !strings.Contains(w, "Notes") {
		t.Fatalf("windows after the swap:\n%s", w)
	}
	srv.setToken("three")
	swap(srv, headlessDesktop(t, "form"))
	ok("type", map[string]any{"text": "x"})
	if w := ok("list_windows", map[string]any{}); !strings.Contains(w, "Form") {
		t.Fatalf("windows after the second swap:\n%s", w)
	}
}

// swap swaps d into s.
func swap(s *served, d Desktop) {
	s.swap(func() (Desktop, error) { return d, nil }, func() {})
}
