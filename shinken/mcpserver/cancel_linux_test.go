package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// TestCancelExec cancels an exec from the MCP client and checks the
// command is killed on the runtime: the call's own ACI session closes, and
// the runtime kills the process group.
func TestCancelExec(t *testing.T) {
	e := newEnv(t, nil)
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.sess.CallTool(ctx, &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{
			// The pid as the test's /proc names it ($$ names it in the
			// command's own pid namespace).
			"shell": "read -r p _ </proc/self/stat; echo $p > " + fifo + "; exec sleep 60", "timeout_ms": 120000}})
		done <- err
	}()
	// Opening the fifo waits for the command to open it: it is running.
	b, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	// The kill follows the cancellation asynchronously: a pidfd becomes
	// readable when the process ends.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 20000); err != nil || n != 1 {
		t.Fatalf("process %d still runs 20 s after the call was cancelled (%v)", pid, err)
	}
	e.ok(t, "list_windows", map[string]any{})
}

// TestCancelHoldKey cancels a long hold_key once it has started: its own
// ACI session closes, the runtime releases the key, and the next input
// runs at once instead of waiting for the hold to end.
func TestCancelHoldKey(t *testing.T) {
	e := newEnv(t, nil)
	e.ok(t, "left_click", map[string]any{"coordinate": model(centre(e.node(t, "text", "Email")))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.sess.CallTool(ctx, &mcp.CallToolParams{Name: "hold_key", Meta: mcp.Meta{"progressToken": "h"},
			Arguments: map[string]any{"text": "shift", "duration": 50}})
		done <- err
	}()
	<-e.progressed
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled hold_key: %v", err)
	}
	// The hold would keep the input for 50 s; a type waiting that long
	// would fail this deadline.
	tctx, tcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer tcancel()
	res, err := e.sess.CallTool(tctx, &mcp.CallToolParams{Name: "type", Arguments: map[string]any{"text": "ada"}})
	if err != nil || res.IsError {
		t.Fatalf("type after the cancelled hold: %v %v", err, res)
	}
	if v := e.node(t, "text", "Email").Value; v != "ada" {
		t.Fatalf("Email holds %q: shift is still down, or the typing was lost", v)
	}
}
