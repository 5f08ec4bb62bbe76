package mcpserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/proctest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/mcpserver"
)

// commandOutput reads the command's output from 0 until it contains want
// or the command has ended.
func commandOutput(t *testing.T, e *env, id, want string) (string, mcpserver.CommandRead) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res := e.call(t, "command_output", map[string]any{"id": id, "max_output": 1 << 20})
		if res.IsError {
			t.Fatalf("command_output: %s", text(res))
		}
		var r mcpserver.CommandRead
		structured(t, res, &r)
		if strings.Contains(text(res), want) || !r.Running {
			return text(res), r
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q: %s", want, text(res))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCommandTools starts a background command through MCP, lists it,
// sends it input, reattaches to its output, kills it by pid and by
// handle, and refuses an unknown handle with a clear error.
func TestCommandTools(t *testing.T) {
	e := newEnv(t, nil)
	var started mcpserver.CommandStarted
	structured(t, e.call(t, "command_start", map[string]any{"line": `echo ready; while read -r l; do echo "got $l"; done`}), &started)
	commandOutput(t, e, started.ID, "ready")
	var list mcpserver.CommandList
	res := e.call(t, "command_list", map[string]any{})
	structured(t, res, &list)
	var pid int
	for _, c := range list.Commands {
		if c.ID == started.ID && c.Running && strings.Contains(c.Line, "while read") {
			pid = c.PID
		}
	}
	if pid <= 0 || !strings.Contains(text(res), started.ID) {
		t.Fatalf("not listed: %s", text(res))
	}
	e.ok(t, "command_input", map[string]any{"id": started.ID, "input": "one\n"})
	if out, _ := commandOutput(t, e, started.ID, "got one"); !strings.Contains(out, "got one") {
		t.Fatalf("the input did not reach it: %s", out)
	}
	// Reattach from the end of the first line.
	var first mcpserver.CommandRead
	structured(t, e.call(t, "command_output", map[string]any{"id": started.ID, "max_output": 6}), &first)
	if first.From != 0 || first.End != 6 || !first.Running {
		t.Fatalf("the first read: %+v", first)
	}
	res = e.call(t, "command_output", map[string]any{"id": started.ID, "offset": first.End})
	if got := text(res); !strings.HasPrefix(got, "got one\n[running") {
		t.Fatalf("reattached at %d: %q", first.End, got)
	}
	e.ok(t, "command_kill", map[string]any{"pid": pid})
	_, r := commandOutput(t, e, started.ID, "never")
	if !r.Killed {
		t.Fatalf("after the kill: %+v", r)
	}
	deadline := time.Now().Add(time.Minute)
	for procfs.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed command %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.fails(t, "command_input", map[string]any{"id": started.ID, "input": "late\n"}, aci.CodeInvalidAction)
	e.ok(t, "command_kill", map[string]any{"id": started.ID, "remove": true})

	unknown := filepath.Join(os.TempDir(), "shinken-cmd.Zz000000")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"command_output", map[string]any{"id": unknown}},
		{"command_output", map[string]any{"id": started.ID}},
		{"command_input", map[string]any{"id": unknown, "input": "x"}},
		{"command_kill", map[string]any{"id": "/etc"}},
		{"command_kill", map[string]any{"pid": 1}},
		{"command_kill", map[string]any{}},
		{"command_start", map[string]any{}},
		{"command_start", map[string]any{"line": "true", "argv": []string{"true"}}},
	} {
		msg := e.fails(t, tc.tool, tc.args, aci.CodeInvalidAction)
		if strings.Count(msg, "invalid_action") != 1 {
			t.Errorf("%s %v: %q", tc.tool, tc.args, msg)
		}
		if id, _ := tc.args["id"].(string); id == unknown && !strings.Contains(msg, "no such background command") {
			t.Errorf("%s of an unknown handle: %q", tc.tool, msg)
		}
	}
}

// TestCommandToolsSessionEnd: when an MCP session ends, its background
// commands end, with every process they started (ones that left the
// process group and the session too), and their handles are gone.
func TestCommandToolsSessionEnd(t *testing.T) {
	e := newEnv(t, nil)
	sess, done := connectInMemory(t, context.Background(), e.srv, nil)
	d := t.TempDir()
	job := `read -r p _ </proc/self/stat; echo $p >"$0.t"; mv "$0.t" "$0"; exec sleep 1000`
	line := fmt.Sprintf(`(setsid sh -c '%[2]s' %[1]s/1 &); (sh -c '%[2]s' %[1]s/2 &); sh -c '%[2]s' %[1]s/3`, d, job)
	other := &env{sess: sess}
	var started mcpserver.CommandStarted
	structured(t, other.call(t, "command_start", map[string]any{"line": line}), &started)
	pids := proctest.PIDFiles(t, d, proctest.Numbered(3)...)
	done()
	proctest.Gone(t, pids...)
	// The session's end removes its handles after it kills what they ran,
	// and after the client has seen the session close: wait for the
	// handle to go, then check how it is refused.
	deadline := time.Now().Add(time.Minute)
	for !e.call(t, "command_output", map[string]any{"id": started.ID}).IsError {
		if time.Now().After(deadline) {
			t.Fatalf("the handle %s outlived its session by a minute", started.ID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.fails(t, "command_output", map[string]any{"id": started.ID}, aci.CodeInvalidAction)
}

// TestCommandsTypeScript drives the background commands with the official
// TypeScript SDK's client over streamable HTTP (started, listed, input,
// reattached, killed by handle and by pid, an unknown handle refused),
// then ends its session with DELETE: every process it started, from the
// shell or a background command, in its own session or not, ends.
func TestCommandsTypeScript(t *testing.T) {
	node, modules := nodeSDK(t)
	e := newEnv(t, nil)
	hs := httptest.NewServer(e.srv.Handler(token))
	t.Cleanup(func() {
		e.srv.Close()
		hs.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d := t.TempDir()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "commands_client.cjs"), hs.URL, token, d)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var pids []int
	for _, f := range []string{"shell-setsid", "shell-job", "bg-setsid"} {
		b, err := os.ReadFile(filepath.Join(d, f))
		if err != nil {
			t.Fatal(err)
		}
		p, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p)
	}
	proctest.Gone(t, pids...)
}

// nodeSDK finds node and the TypeScript MCP SDK's modules.
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
		t.Fatalf("the TypeScript MCP SDK is not installed (scripts/test installs it): %v", err)
	}
	return node, modules
}
