package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/mcpserver"
)

// TestHostTools checks the machine's tools through the Go SDK: files in
// and out, their failures with their codes, the shell, the screen size,
// and every one refused when the Authorizer refuses commands.
func TestHostTools(t *testing.T) {
	e := newEnv(t, nil)
	dir := t.TempDir()
	bin := []byte{0, 1, 2, 0xff, 0xfe, '\n', 0x80}
	e.ok(t, "write_file", map[string]any{"path": filepath.Join(dir, "b"), "base64": base64.StdEncoding.EncodeToString(bin)})
	if got, _ := os.ReadFile(filepath.Join(dir, "b")); !bytes.Equal(got, bin) {
		t.Fatalf("written %x", got)
	}
	var fc struct {
		Base64 string `json:"base64"`
		Length int    `json:"length"`
		Size   int64  `json:"size"`
		EOF    bool   `json:"eof"`
	}
	structured(t, e.call(t, "read_file", map[string]any{"path": filepath.Join(dir, "b")}), &fc)
	if got, _ := base64.StdEncoding.DecodeString(fc.Base64); !bytes.Equal(got, bin) || fc.Length != len(bin) || fc.Size != int64(len(bin)) || !fc.EOF {
		t.Fatalf("read %+v", fc)
	}
	structured(t, e.call(t, "read_file", map[string]any{"path": filepath.Join(dir, "b"), "offset": 3, "length": 2}), &fc)
	if got, _ := base64.StdEncoding.DecodeString(fc.Base64); !bytes.Equal(got, bin[3:5]) || fc.EOF {
		t.Fatalf("read a chunk %+v", fc)
	}
	// Text comes once, as the call's text.
	e.ok(t, "write_file", map[string]any{"path": filepath.Join(dir, "t"), "text": "héllo\n"})
	res := e.call(t, "read_file", map[string]any{"path": filepath.Join(dir, "t")})
	if got := text(res); got != "héllo\n" {
		t.Fatalf("read_file of text: %q", got)
	}
	if raw, _ := json.Marshal(res.StructuredContent); strings.Contains(string(raw), "llo") {
		t.Fatalf("the text is sent twice: %s", raw)
	}
	e.ok(t, "delete", map[string]any{"path": filepath.Join(dir, "t")})
	e.fails(t, "read_file", map[string]any{"path": filepath.Join(dir, "nope")}, aci.CodeInvalidAction)
	e.fails(t, "read_file", map[string]any{"path": ""}, aci.CodeInvalidAction)
	e.fails(t, "read_file", map[string]any{"path": dir, "length": 600000}, aci.CodeInvalidAction) // over the schema's bound
	e.fails(t, "write_file", map[string]any{"path": filepath.Join(dir, "x"), "text": "a", "append": true, "offset": 2}, aci.CodeInvalidAction)
	e.fails(t, "delete", map[string]any{"path": dir}, aci.CodeInvalidAction)
	e.fails(t, "mkdir", map[string]any{"path": dir}, aci.CodeInvalidAction)
	if _, ok := e.tools(t)["open"]; ok {
		t.Fatal("open is offered on the headless desktop, which has no opener")
	}
	if got := text(e.call(t, "key_down", map[string]any{"key": "banana"})); got != `invalid_action: unknown key "banana"` {
		t.Fatalf("key_down banana: %q", got)
	}
	e.fails(t, "write_file", map[string]any{"path": filepath.Join(dir, "x"), "text": "a", "base64": "YQ=="}, aci.CodeInvalidAction)
	e.fails(t, "write_file", map[string]any{"path": filepath.Join(dir, "x"), "base64": "!!"}, aci.CodeInvalidAction)
	e.fails(t, "list_files", map[string]any{"path": filepath.Join(dir, "b")}, aci.CodeInvalidAction)
	if got := e.ok(t, "screen_size", map[string]any{}); got != "1280x800" {
		t.Fatalf("screen_size %q", got)
	}
	// The command runs to its end: its output, then its exit code.
	if out := e.ok(t, "shell", map[string]any{"input": "cd " + dir + " && ls", "wait_ms": 120000}); out != "b\n[exit code 0]" {
		t.Fatalf("the shell printed %q", out)
	}
	if out := e.ok(t, "shell", map[string]any{"input": "head -c 100000 /dev/zero | tr '\\0' a; echo", "wait_ms": 120000, "max_output": 1000}); !strings.HasSuffix(out, "a\n[99001 bytes of earlier output cut; exit code 0]") {
		t.Fatalf("a cut output: %q", out[max(0, len(out)-200):])
	}
	e.ok(t, "shell", map[string]any{"close": true})
	e.denyAll = true
	for name, args := range map[string]map[string]any{
		"read_file":  {"path": filepath.Join(dir, "b")},
		"write_file": {"path": filepath.Join(dir, "b"), "text": "x"},
		"list_files": {"path": dir},
		"shell":      {"input": "echo hi\n"},
		"stat":       {"path": dir},
		"exists":     {"path": dir},
		"mkdir":      {"path": filepath.Join(dir, "m")},
		"move":       {"from": filepath.Join(dir, "b"), "to": filepath.Join(dir, "c")},
		"delete":     {"path": filepath.Join(dir, "b")},
	} {
		e.fails(t, name, args, aci.CodePermissionDenied)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "b")); !bytes.Equal(got, bin) {
		t.Fatal("a refused write changed the file")
	}
}

// TestHostToolsTypeScript moves files in and out, uses the shell, holds a
// key and moves and closes a window with the official TypeScript SDK's
// client over streamable HTTP.
func TestHostToolsTypeScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed (scripts/test installs it)")
	}
	modules, err := filepath.Abs(filepath.Join("..", "..", ".npm", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed (scripts/test installs it): %v", err)
	}
	e := newEnv(t, nil)
	hs := httptest.NewServer(e.srv.Handler(token))
	t.Cleanup(func() {
		e.srv.Close()
		hs.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "host_client.cjs"), hs.URL, token, t.TempDir())
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("node: %v\n%s", err, out)
	}
}

// TestHeldKeys holds ctrl across calls: the key after key_down is made
// with it (ctrl+a selects the field), type is refused while it is held,
// and key_up releases it.
func TestHeldKeys(t *testing.T) {
	e := newEnv(t, nil)
	name := e.node(t, "text", "Name")
	c := centre(name)
	e.ok(t, "left_click", map[string]any{"coordinate": model(c)})
	e.ok(t, "type", map[string]any{"text": "abc"})
	e.ok(t, "key_down", map[string]any{"key": "CTRL"})
	e.fails(t, "type", map[string]any{"text": "x"}, aci.CodeInvalidAction)
	e.ok(t, "key", map[string]any{"text": "a"})
	e.fails(t, "key_down", map[string]any{"key": "a"}, aci.CodeInvalidAction)
	e.fails(t, "key_up", map[string]any{"key": "shift"}, aci.CodeInvalidAction)
	if got := e.ok(t, "key_up", map[string]any{"key": "ctrl"}); got != "no key held" {
		t.Fatalf("key_up: %q", got)
	}
	e.ok(t, "type", map[string]any{"text": "X"})
	if got := e.node(t, "text", "Name").Value; got != "X" {
		t.Fatalf("ctrl held across calls: the name reads %q, want X (ctrl+a, then X)", got)
	}
}

// tools lists the tools the server offers, by name.
func (e *env) tools(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	res, err := e.sess.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		m[tool.Name] = tool
	}
	return m
}

// TestShellLines: with Options.ShellLines the shell tool types a line only
// when the shell reads it as a command line, and shows the Authorizer the
// line, not dynamic; an input while a program runs in the foreground, or
// of two lines, is refused as invalid_action, naming what runs, and never
// reaches it. Without ShellLines, typed text is dynamic (whatever reads the
// terminal reads it).
func TestShellLines(t *testing.T) {
	raw := newEnv(t, nil)
	raw.denyDynamic = true
	raw.fails(t, "shell", map[string]any{"input": "echo hi"}, aci.CodePermissionDenied)

	e := newEnv(t, &mcpserver.Options{ShellLines: true})
	e.denyDynamic = true
	long := 120000
	if out := e.ok(t, "shell", map[string]any{"input": "echo $((6*7)) $PAGER $EDITOR", "wait_ms": long}); out != "42 cat false\n[exit code 0]" {
		t.Fatalf("a line: %q", out)
	}
	if got := e.fails(t, "shell", map[string]any{"input": "echo a\necho b"}, aci.CodeInvalidAction); !strings.Contains(got, "newline") {
		t.Fatalf("two lines: %q", got)
	}
	for _, fg := range []string{"sleep 300", "cat"} {
		if out := e.ok(t, "shell", map[string]any{"input": fg, "wait_ms": 50}); !strings.HasSuffix(out, "[still running in the foreground]") {
			t.Fatalf("%s: %q", fg, out)
		}
		// The shell hands the terminal to the program a moment after it
		// read the line: until then the input is refused as not at the
		// prompt, then as its child's (not yet the program), then as the
		// program's. Every refusal types nothing.
		for {
			got := e.fails(t, "shell", map[string]any{"input": "echo reached-" + fg}, aci.CodeInvalidAction)
			if strings.Contains(got, fg+" runs in the shell's foreground") && strings.Contains(got, "command_start") {
				break
			}
			if !strings.Contains(got, "not at its prompt") && !strings.Contains(got, "a program the shell started runs") {
				t.Fatalf("typed while %s runs: %q", fg, got)
			}
		}
		out := e.ok(t, "shell", map[string]any{"interrupt": true, "wait_ms": long})
		for !strings.Contains(out, "[exit code") {
			out += e.ok(t, "shell", map[string]any{"interrupt": true, "wait_ms": long})
		}
		if strings.Contains(out, "reached-") {
			t.Fatalf("a refused input reached %s: %q", fg, out)
		}
	}
	if out := e.ok(t, "shell", map[string]any{"input": "echo back", "wait_ms": long}); out != "back\n[exit code 0]" {
		t.Fatalf("after the interrupts: %q", out)
	}
}
