package escouade_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
)

// TestHostileEscapees: a command plugin's children that left its process
// group (setsid, setpgid), and a proc/spawn program's that did, end with
// the plugin, held by a cgroup where one can be made (auto), and by a
// shepherd otherwise (forced here, so that both ways are tried on a
// machine where cgroups work); with neither, only the group is promised,
// and the test ends the escapees itself.
func TestHostileEscapees(t *testing.T) {
	for _, mode := range []string{"auto", "shepherd", "group"} {
		t.Run(mode, func(t *testing.T) {
			defer escouade.SetContainment(mode)()
			hostileEscapees(t, mode)
		})
	}
}

func hostileEscapees(t *testing.T, mode string) {
	contained := escouade.Contained()
	t.Logf("descendants held by: %q", escouade.Containment())
	if contained != (mode != "group") {
		t.Fatalf("containment %q in mode %s", escouade.Containment(), mode)
	}
	before := len(processesBelow(os.Getpid()))
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
		var ok bool
		pids, ok = hostPIDs(string(b)) // references (pidRef)
		return ok && len(pids) == 2
	})

	// A proc/spawn program that starts a new session.
	ph, _, _, _ := procHost(t)
	lp := startLinePlugin(t, ph, v, "spawner", `,"permissions":{"commands":["sh -c *"]}`, "")
	var r struct{ Proc int64 }
	if err := lp.call("proc/spawn", map[string]any{"command": "sh", "args": []string{"-c", "setsid sleep 300 >/dev/null 2>&1 & " + hostPIDsScript + "echo $hostkids; exec sleep 300"}}, &r); err != nil {
		t.Fatal(err)
	}
	n := lp.next(t, "", func(n note) bool { return n.method == "proc/out" && num(n.params["proc"]) == r.Proc })
	spawned := hostPID(n.params["data"].(string))
	if spawned <= 0 {
		t.Fatalf("the spawned program said %v: no live process", n.params)
	}
	pids = append(pids, spawned)
	for _, pid := range pids {
		if !procfs.Alive(pid) {
			t.Fatalf("escapee %d is not running", pid)
		}
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	// A program that ends takes what it started with it, setsid or not.
	out, _ := lp.run(t, map[string]any{"command": "sh", "args": []string{"-c", "setsid sleep 300 >/dev/null 2>&1 & " + hostPIDsScript + "echo $hostkids"}})
	if !pidRefLine.MatchString(out) {
		t.Fatalf("the spawned program said %q", out)
	}
	// Its reference names a live process only if it outlived its program.
	if orphan := hostPID(out); orphan > 0 {
		syscall.Kill(orphan, syscall.SIGKILL)
		if contained {
			t.Errorf("the setsid child %d outlived its program's exit", orphan)
		}
	}

	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := lp.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if contained {
		for _, pid := range pids {
			waitFor(t, "escapee "+strconv.Itoa(pid)+" ended", func() bool { return !procfs.Alive(pid) })
		}
	}
	// The host and the other plugin carry on.
	h.Fact(context.Background(), "ticket.report", nil, escouade.About{})
	waitFor(t, "the bystander's fact", func() bool { return len(bystander.names()) == 1 })
	if contained {
		// No process of this binary is left from the plugin: not an
		// escapee, not a shepherd.
		waitFor(t, "the plugin's processes gone", func() bool { return len(processesBelow(os.Getpid())) <= before })
	}
}

// hostWithEscapees starts a Host in a process of its own, its descendants
// held as mode says, with a command plugin whose two children leave its
// group, and returns it once both children are running (they are killed
// at the test's end, whatever it finds).
func hostWithEscapees(t *testing.T, mode string) *exec.Cmd {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pids")
	dir := writePlugin(t, "orphans", commandManifest("escapees", pidFile), nil)
	exe, _ := os.Executable()
	host := exec.Command(exe, pluginArg, "host-contained", mode, dir)
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	escapeePIDs(t, pidFile)
	return host
}

// TestHostDeathSweepsEscapees: a Host killed outright takes with it its
// command plugin and the plugin's children that left its group, when a
// shepherd holds them: the shepherd's lifeline ends with the Host, and it
// sweeps what is below it.
func TestHostDeathSweepsEscapees(t *testing.T) {
	host := hostWithEscapees(t, "shepherd")
	// The plugin, its shepherd and its two escapees, below the Host.
	held := processesBelow(host.Process.Pid)
	if len(held) != 4 {
		t.Fatalf("below the Host: %v, want the shepherd, the plugin and two escapees", held)
	}
	host.Process.Signal(syscall.SIGKILL)
	host.Wait()
	for _, pid := range held {
		waitFor(t, "process "+strconv.Itoa(pid)+" ended with its Host", func() bool { return !procfs.Alive(pid) })
	}
}

// processesBelow returns the live processes of this test binary below
// ancestor.
func processesBelow(ancestor int) []int {
	var below []int
	for _, pid := range testProcesses() {
		if isBelow(pid, ancestor) {
			below = append(below, pid)
		}
	}
	return below
}

// isBelow reports whether pid is a descendant of ancestor.
func isBelow(pid, ancestor int) bool {
	for pid > 1 {
		st, err := procfs.ReadStat(pid)
		if err != nil {
			return false
		}
		if pid = st.PPID; pid == ancestor {
			return true
		}
	}
	return false
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
	wantCode(t, "a port the shared process does not listen on", err, protocol.CodeRefused)
	if r.Body != nil {
		t.Fatalf("reached another server: %q", *r.Body)
	}
}

// TestHostileCgroupEscape: a plugin's grandchild starts a session of its
// own and writes its pid into the Host's own cgroup.procs, leaving the
// plugin's process group and its cgroup (a process of the
// user may: REFERENCE.md). Its parent, in the cgroup, still names it: it
// dies with the plugin, and does not outlive Close.
func TestHostileCgroupEscape(t *testing.T) {
	defer escouade.SetContainment("auto")()
	// The machine's cgroup hierarchy, for the escape to be tried at all:
	// with the private mounts, the Host's cgroup.procs is not there
	// (TestHostileCgroupFiles). This is what holds where they cannot be
	// made.
	defer escouade.SetPrivateMounts(false)()
	if escouade.Containment() != "cgroup" {
		citest.Skip(t, "no cgroup can be made here (descendants held by %q): nothing to escape from", escouade.Containment())
	}
	procs := filepath.Join(escouade.CgroupParent(), "cgroup.procs")
	marker := filepath.Join(t.TempDir(), "escaper")
	v := newValidator(t)
	withTranscript(t, v)
	h, _ := newHost(t, nil)
	p := startCommand(t, h, v, "escape", ``, "cgroup-escape", procs, marker)
	var pid int
	waitFor(t, "the escaper's pid", func() bool {
		b, _ := os.ReadFile(marker)
		pid = hostPID(string(b)) // a reference (pidRef)
		return pid > 0
	})
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	own, _ := os.ReadFile("/proc/self/cgroup")
	theirs, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if string(own) != string(theirs) {
		t.Fatalf("the escaper did not reach the Host's cgroup:\n%s\nvs the Host's\n%s", theirs, own)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the escaper's end", func() bool { return !procfs.Alive(pid) })
}

// escapeePIDs waits for the two pids the escapees plugin writes to pidFile
// and returns them; they are killed at the test's end, whatever it finds.
func escapeePIDs(t *testing.T, pidFile string) []int {
	t.Helper()
	var pids []int
	waitFor(t, "the escapees' pids", func() bool {
		b, _ := os.ReadFile(pidFile)
		var ok bool
		pids, ok = hostPIDs(string(b)) // references (pidRef)
		return ok && len(pids) == 2
	})
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pids
}
