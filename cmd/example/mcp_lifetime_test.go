package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/internal/proctest"
)

// agentProcesses starts, through sess, processes of every kind an agent
// can leave behind: shell jobs that stay in the shell's session and ones
// that leave it (setsid, double fork), a background command, and a
// process that command sent off with setsid. It returns their pids, each
// seen running.
func agentProcesses(t *testing.T, ctx context.Context, sess *mcp.ClientSession) []int {
	t.Helper()
	d := t.TempDir()
	job := func(name string, setsid bool) string {
		s := ""
		if setsid {
			s = "setsid "
		}
		return fmt.Sprintf(`(%ssh -c 'read -r p _ </proc/self/stat; echo $p >"$0.t"; mv "$0.t" "$0"; exec sleep 1000' %s &)`, s, filepath.Join(d, name))
	}
	call := func(tool string, args map[string]any) map[string]any {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		return out
	}
	call("shell", map[string]any{"input": job("shell-setsid", true) + "; " + job("shell-job", false), "wait_ms": 120000})
	call("command_start", map[string]any{"line": job("bg-setsid", true) + "; exec sleep 1000"})
	started := call("command_start", map[string]any{"argv": []string{"sleep", "1001"}})
	names := []string{"shell-setsid", "shell-job", "bg-setsid"}
	pids := proctest.PIDFiles(t, d, names...)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		list := call("command_list", map[string]any{})
		b, _ := json.Marshal(list)
		var l struct {
			Commands []struct {
				ID  string `json:"id"`
				PID int    `json:"pid"`
			} `json:"commands"`
		}
		json.Unmarshal(b, &l)
		pid := 0
		for _, c := range l.Commands {
			if c.ID == started["id"] {
				pid = c.PID
			}
		}
		if pid > 0 {
			pids = append(pids, pid)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background command's pid never came: %s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	proctest.Alive(t, pids...)
	return pids
}

// ownTmp is the test's environment with a TMPDIR of the test's own, where
// the background commands' folders go (a daemon killed leaves them there).
func ownTmp(t *testing.T) []string {
	return append(os.Environ(), "TMPDIR="+t.TempDir())
}

// TestMCPNothingOutlivesSession ends an MCP session each way it can end,
// with shell jobs and background commands running, some of them in
// sessions of their own, and counts in /proc that none of them is left:
// stdio closed, the daemon SIGKILLed under -mcp stdio and under /mcp, and
// an HTTP session ended with DELETE.
func TestMCPNothingOutlivesSession(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	client := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil)
	t.Run("stdio close", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.Command(bin, "-mcp", "stdio", "-token", "tok", "-no-guard")
		cmd.Env = ownTmp(t)
		sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		pids := agentProcesses(t, ctx, sess)
		sess.Close()
		proctest.Gone(t, pids...)
	})
	t.Run("stdio SIGKILL", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.Command(bin, "-mcp", "stdio", "-token", "tok", "-no-guard")
		cmd.Env = ownTmp(t)
		sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		pids := agentProcesses(t, ctx, sess)
		cmd.Process.Kill()
		proctest.Gone(t, pids...)
	})
	t.Run("http DELETE", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-no-guard")
		cmd.Env = ownTmp(t)
		d := startCmd(t, cmd)
		sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL(d.aci), HTTPClient: &http.Client{Transport: bearerTransport{"tok"}}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		pids := agentProcesses(t, ctx, sess)
		sess.Close()
		proctest.Gone(t, pids...)
	})
	t.Run("http SIGKILL", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-no-guard")
		cmd.Env = ownTmp(t)
		d := startCmd(t, cmd)
		sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL(d.aci), HTTPClient: &http.Client{Transport: bearerTransport{"tok"}}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		pids := agentProcesses(t, ctx, sess)
		d.cmd.Process.Kill()
		proctest.Gone(t, pids...)
	})
}
