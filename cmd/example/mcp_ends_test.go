package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/daemon"
	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/proctest"
)

// A leavingClient is an MCP client's HTTP side that can leave the way a
// crashed or unplugged agent does: its connections are cut under it, with
// no DELETE and no cancellation sent, and it dials nothing after.
type leavingClient struct {
	token string
	tr    *http.Transport

	mu    sync.Mutex
	conns []net.Conn
	gone  bool
}

func newLeavingClient(token string) *leavingClient {
	l := &leavingClient{token: token}
	var d net.Dialer
	l.tr = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.gone {
			return nil, errors.New("the client has left")
		}
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			l.conns = append(l.conns, c)
		}
		return c, err
	}}
	return l
}

func (l *leavingClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+l.token)
	return l.tr.RoundTrip(r)
}

// leave cuts every connection and refuses every later dial.
func (l *leavingClient) leave() {
	l.mu.Lock()
	l.gone = true
	conns := l.conns
	l.conns = nil
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	l.tr.CloseIdleConnections()
}

// daemonLoad is what a daemon holds: its goroutines (from /metrics) and
// its open file descriptors (counted in /proc).
type daemonLoad struct{ goroutines, fds int }

func (l daemonLoad) String() string { return fmt.Sprintf("%d goroutines, %d fds", l.goroutines, l.fds) }

// loadOf reads d's load. /metrics is fetched on a connection of its own,
// closed after, so that each reading holds the same one connection.
func loadOf(t *testing.T, d *running) daemonLoad {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, d.httpBase()+daemon.PathMetrics, nil)
	req.Header.Set("Authorization", "Bearer tok")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g := sample(families(t, string(b)), "go_goroutines", nil)
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", d.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	return daemonLoad{int(g), len(ents)}
}

// execPid starts, through sess, an exec that writes its pid to a file and
// then runs for longer than the test, and returns that pid once it runs;
// the call stays in flight. The call's end is sent on ended.
func execPid(t *testing.T, ctx context.Context, sess *mcp.ClientSession, ended chan<- error) int {
	t.Helper()
	f := filepath.Join(t.TempDir(), "exec")
	go func() {
		_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{
			"shell": fmt.Sprintf(`read -r p _ </proc/self/stat; echo $p >%[1]s.t; mv %[1]s.t %[1]s; exec sleep 1002`, f), "timeout_ms": 600000}})
		ended <- err
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, err := os.ReadFile(f)
		if err == nil {
			p, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		if time.Now().After(deadline) {
			t.Fatal("the exec never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMCPIdleExpiryEndsEverything abandons an HTTP MCP session (its client
// just leaves: connections cut, no DELETE, no cancellation) with a shell
// and its jobs, background commands and an exec running. After the
// session's idle bound (-mcp-idle) no process the agent started is alive
// (counted in /proc), and the daemon's goroutines and file descriptors
// come back to what they were before the session.
func TestMCPIdleExpiryEndsEverything(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The bound is short, yet longer than any pause of the set-up between
	// its calls (it polls for files with a call in flight, or none at all
	// for a few milliseconds).
	cmd := exec.Command(bin, "-no-guard", "-listen", "127.0.0.1:0", "-token", "tok", "-mcp-idle", "5s")
	cmd.Env = ownTmp(t)
	d := startCmd(t, cmd)
	base := loadOf(t, d)

	lc := newLeavingClient("tok")
	client := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL(d.aci), HTTPClient: &http.Client{Transport: lc}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pids := agentProcesses(t, ctx, sess)
	ended := make(chan error, 1)
	pids = append(pids, execPid(t, ctx, sess, ended))
	lc.leave()
	if err := <-ended; err == nil {
		t.Fatal("the exec call answered after its client left")
	}
	deadline := time.Now().Add(time.Minute)
	for _, p := range pids {
		for procfs.Alive(p) {
			if time.Now().After(deadline) {
				var alive []int
				for _, p := range pids {
					if procfs.Alive(p) {
						alive = append(alive, p)
					}
				}
				t.Fatalf("processes %v of %v outlived the idle expiry", alive, pids)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// What the session held goes after its processes, in its own time:
	// poll until the daemon is back to its load before the session.
	deadline = time.Now().Add(time.Minute)
	for {
		now := loadOf(t, d)
		if now.goroutines <= base.goroutines && now.fds <= base.fds {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the idle expiry the daemon holds %v, before the session %v", now, base)
		}
		time.Sleep(50 * time.Millisecond)
	}
	sess.Close() // the client's own goroutines; its DELETE cannot leave
	d.stop(t)
}

// TestSweepAtStart kills a daemon with SIGKILL while a background command
// runs: its command dies and its folder stays in $TMPDIR; the next daemon
// removes it as it starts, and keeps a command folder a live process
// holds. With -agent-user the folder is the agent user's, and it goes too.
func TestSweepAtStart(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	t.Run("daemon-user", func(t *testing.T) { testSweepAtStart(t, bin, nil) })
	t.Run("agent-user", func(t *testing.T) {
		u := agentusertest.Need(t)
		testSweepAtStart(t, bin, []string{"-agent-user", u.Name})
	})
}

func testSweepAtStart(t *testing.T, bin string, flags []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// A folder the agent's user makes its folders in, as it does in /tmp.
	tmp, err := os.MkdirTemp("", "sweep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+tmp)

	held := filepath.Join(tmp, "shinken-cmd.Held0000")
	os.Mkdir(held, 0o700)
	os.WriteFile(filepath.Join(held, "hpid"), []byte("999999999 1\n"), 0o600)
	holder := exec.Command("sleep", "1000")
	holder.Dir = held
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		holder.Process.Kill()
		holder.Wait()
	}()

	cmd := exec.Command(bin, append([]string{"-no-guard", "-mcp", "stdio", "-token", "tok"}, flags...)...)
	cmd.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "0"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "command_start", Arguments: map[string]any{"argv": []string{"sleep", "1003"}}})
	if err != nil || res.IsError {
		t.Fatalf("command_start: %v %+v", err, res.Content[0])
	}
	m, _ := filepath.Glob(filepath.Join(tmp, "shinken-cmd.*"))
	m = slices.DeleteFunc(m, func(d string) bool { return d == held })
	if len(m) != 1 {
		t.Fatalf("command folders %q", m)
	}
	left := m[0]
	if fi, err := os.Stat(left); err != nil {
		t.Fatal(err)
	} else if own := fi.Sys().(*syscall.Stat_t).Uid; (len(flags) > 0) != (own != uint32(os.Geteuid())) {
		t.Fatalf("the command's folder belongs to uid %d (flags %q)", own, flags)
	}
	var pid int
	deadline := time.Now().Add(time.Minute)
	for pid == 0 {
		b, _ := os.ReadFile(filepath.Join(left, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if time.Now().After(deadline) {
			t.Fatal("the command never ran")
		}
		time.Sleep(10 * time.Millisecond) // polling for the command's pid, within the hang guard
	}
	cmd.Process.Kill()
	proctest.Gone(t, pid)
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("the killed daemon's command folder is already gone (%v): nothing to sweep", err)
	}

	next := exec.Command(bin, append([]string{"-no-guard", "-listen", "127.0.0.1:0", "-token", "tok"}, flags...)...)
	next.Env = env
	startCmd(t, next) // the sweep is done before the daemon listens
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the command folder a killed daemon left is still there after a start: %v", err)
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("a held command folder was removed: %v", err)
	}
}

// TestMCPShellTypeScript drives the shell and the background commands with
// the official TypeScript SDK's client, over -mcp stdio and over /mcp on
// the headless desktop, and over /mcp on X11 (a real X session): sleep 5;
// echo done with a 10 s wait answers
// "done" and exit code 0 after the 5 s, the shell keeps a variable from
// call to call, and a background command is listed, given input,
// reattached and killed.
func TestMCPShellTypeScript(t *testing.T) {
	bin := build(t, t.TempDir(), ".", "example")
	node, modules := nodeSDK(t)
	run := func(t *testing.T, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "shell_client.cjs")}, args...)...)
		cmd.Env = append(ownTmp(t), "NODE_PATH="+modules)
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
			t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Log(string(out))
	}
	t.Run("stdio", func(t *testing.T) { run(t, "stdio", bin, "tok") })
	t.Run("http", func(t *testing.T) {
		cmd := exec.Command(bin, "-no-guard", "-listen", "127.0.0.1:0", "-token", "tok")
		cmd.Env = ownTmp(t)
		d := startCmd(t, cmd)
		run(t, "http", mcpURL(d.aci), "tok")
	})
	t.Run("x11", func(t *testing.T) {
		sess := atspitest.Start(t)
		cmd := exec.Command(bin, "-no-guard", "-listen", "127.0.0.1:0", "-token", "tok", "-backend", "x11")
		cmd.Env = append(sess.Env(), "AT_SPI_BUS_ADDRESS="+sess.A11yBus, "TMPDIR="+t.TempDir())
		d := startCmd(t, cmd)
		run(t, "http", mcpURL(d.aci), "tok")
	})
}
