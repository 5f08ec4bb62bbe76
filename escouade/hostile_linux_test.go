package escouade_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"shinken.dev/go/escouade"
)

// TestHostileEscapees: a command plugin's children that left its process
// group (setsid, setpgid), and a proc/spawn program's that did, end with
// the plugin where Linux contains them in a cgroup; without one, only the
// group is promised, and the test ends the escapees itself.
func TestHostileEscapees(t *testing.T) {
	contained := escouade.Contained()
	t.Logf("descendants contained by a cgroup: %v", contained)
	v := newValidator(t)
	withTranscript(t, v)
	h, _ := newHost(t, nil)
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := startCommand(t, h, v, "escapees", ``, "escapees", pidFile)
	bystander := newSink()
	connect(t, h, v, "bystander", `,"permissions":{"events":["ticket.report"]}`, "", bystander.handlers())
	var pids []int
	waitFor(t, "the escapees' pids", func() bool {
		b, _ := os.ReadFile(pidFile)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(f)
			pids = append(pids, n)
		}
		return len(pids) == 2
	})

	// A proc/spawn program that starts a new session.
	ph, _, _, _ := procHost(t)
	lp := startLinePlugin(t, ph, v, "spawner", `,"permissions":{"commands":["sh -c *"]}`, "")
	var r struct{ Proc int64 }
	if err := lp.call("proc/spawn", map[string]any{"command": "sh", "args": []string{"-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!; exec sleep 300"}}, &r); err != nil {
		t.Fatal(err)
	}
	n := lp.next(t, "", func(n note) bool { return n.method == "proc/out" && num(n.params["proc"]) == r.Proc })
	spawned, err := strconv.Atoi(strings.TrimSpace(n.params["data"].(string)))
	if err != nil {
		t.Fatalf("the spawned program said %v", n.params)
	}
	pids = append(pids, spawned)
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("escapee %d is not running", pid)
		}
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	// A program that ends takes what it started with it, setsid or not.
	out, _ := lp.run(t, map[string]any{"command": "sh", "args": []string{"-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!"}})
	orphan, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("the spawned program said %q", out)
	}
	t.Cleanup(func() { syscall.Kill(orphan, syscall.SIGKILL) })
	if contained && alive(orphan) {
		t.Errorf("the setsid child %d outlived its program's exit", orphan)
	}

	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := lp.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if contained {
		for _, pid := range pids {
			waitFor(t, "escapee "+strconv.Itoa(pid)+" ended", func() bool { return !alive(pid) })
		}
	}
	// The host and the other plugin carry on.
	h.Fact(context.Background(), "ticket.report", nil, escouade.About{})
	waitFor(t, "the bystander's fact", func() bool { return len(bystander.names()) == 1 })
}

// TestHostileSharedLiar: a launch.shared process that prints the port of
// another server on the machine is not believed: local:shared opens only a
// port its processes are seen to listen on.
func TestHostileSharedLiar(t *testing.T) {
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the machine's secret") }))
	defer victim.Close()
	_, port, _ := net.SplitHostPort(victim.Listener.Addr().String())
	v := newValidator(t)
	h, j := hookedHost(t, nil, nil, nil)
	exe, _ := os.Executable()
	launch := fmt.Sprintf(`,"permissions":{"network":["local:shared"]},"launch":{"shared":{"command":[%q,%q,"shared-liar",%q],"listens":"listening on 127\\.0\\.0\\.1:([0-9]+)"}}`, exe, pluginArg, port)
	lp := startLinePlugin(t, h, v, "liar", launch, "")
	j.wait(t, "liar", "launch.shared: listening")
	var r fetchResult
	err := lp.call("net/fetch", map[string]any{"url": "http://127.0.0.1:" + port + "/"}, &r)
	wantCode(t, "a port the shared process does not listen on", err, escouade.CodeRefused)
	if r.Body != nil {
		t.Fatalf("reached another server: %q", *r.Body)
	}
}
