package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// bareBackend is a desktop with a screen and input and nothing else: no
// pointer position, no accessibility tree, no clipboard, no windows, no
// launcher.
type bareBackend struct {
	shinken.Capturer
	shinken.Injector
}

// TestToolErrorCodes checks that a tool that fails carries the code the
// runtime gave the same request made through the ACI Client, and that the
// toolset's own failures keep theirs: the pointer's position, which the
// runtime does not report, is unsupported, not a bad input.
func TestToolErrorCodes(t *testing.T) {
	ctx := context.Background()
	desk := headless.New(&headless.Options{Width: 1280, Height: 800})
	rt := shinken.NewRuntime(bareBackend{desk, desk}, &shinken.RuntimeOptions{Token: token})
	hs := httptest.NewServer(rt)
	defer func() {
		rt.Close()
		hs.Close()
	}()
	proxy := schematest.NewProxy(t, "ws"+strings.TrimPrefix(hs.URL, "http"))
	c, err := client.Dial(ctx, proxy.URL, &client.DialOptions{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := mcpserver.New(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, done := connectInMemory(t, ctx, srv, nil)
	defer done()
	code := func(name string, args map[string]any) aci.Code {
		t.Helper()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			t.Fatalf("%s %v succeeded", name, args)
		}
		got, _ := res.Meta[mcpserver.ErrorCodeMeta].(string)
		if s := text(res); !strings.HasPrefix(s, got+": ") {
			t.Fatalf("%s: text %q does not start with its code %s", name, s, got)
		}
		return aci.Code(got)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		aci  func() error
	}{
		{"key", map[string]any{"text": "NoSuchKey"}, func() error { return c.Key(ctx, "NoSuchKey") }},
		{"key", map[string]any{"text": "ctrl+"}, func() error { return c.Key(ctx, "ctrl+") }},
		{"observe", map[string]any{}, func() error { _, err := c.Observe(ctx, nil); return err }},
		{"click_element", map[string]any{"ref": "e1"}, func() error { return c.Click(ctx, aci.Ref("e1")) }},
		{"clipboard_get", map[string]any{}, func() error { _, err := c.ClipboardGet(ctx); return err }},
		{"clipboard_set", map[string]any{"text": "x"}, func() error { return c.ClipboardSet(ctx, "x") }},
		{"list_windows", map[string]any{}, func() error { _, err := c.ListWindows(ctx); return err }},
		{"activate_window", map[string]any{"id": 7}, func() error { return c.ActivateWindow(ctx, 7) }},
		{"launch_app", map[string]any{"app": "notes"}, func() error { return c.LaunchApp(ctx, "notes") }},
		{"exec", map[string]any{"argv": []string{"true"}}, func() error { _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"true"}}); return err }},
	} {
		want := aci.CodeOf(tc.aci())
		if got := code(tc.tool, tc.args); got != want {
			t.Errorf("%s %v: code %s, the runtime gave %s", tc.tool, tc.args, got, want)
		}
	}
	if got := code("cursor_position", map[string]any{}); got != aci.CodeUnsupported {
		t.Errorf("cursor_position without a pointer position: %s, want unsupported", got)
	}
	if got := code("left_click", map[string]any{}); got != aci.CodeUnsupported {
		t.Errorf("left_click where the pointer is, without a pointer position: %s, want unsupported", got)
	}
	if got := code("zoom", map[string]any{"region": []int{10, 10, 5, 5}}); got != aci.CodeInvalidAction {
		t.Errorf("zoom of an upside-down region: %s, want invalid_action", got)
	}
}
