package escouade_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"shinken.dev/go/escouade"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
)

// needPIDNamespaces skips a test of what a pid namespace holds on a
// machine where the Host may make none (it lacks CAP_SYS_ADMIN): there,
// REFERENCE.md says what holds instead, and the other tests try it.
func needPIDNamespaces(t *testing.T) {
	t.Helper()
	if !escouade.PIDNamespaces() {
		citest.Skip(t, "the Host may make no pid namespace here (no CAP_SYS_ADMIN, no user namespaces)")
	}
}

// TestHostileCgroupEscapeOrphaned: a plugin's grandchild writes its pid
// into the Host's own cgroup.procs, leaving the plugin's cgroup, then
// double-forks with setsid, so that no parentage names what is left. The
// plugin's shepherd is the init of its pid namespace, which no process
// leaves: that process is dead when Host.Close returns, and no process of
// the plugin is left. Without a namespace the shepherd, a subreaper above
// every program that may start others, adopts it and sweeps it.
func TestHostileCgroupEscapeOrphaned(t *testing.T) {
	defer escouade.SetContainment("auto")()
	defer escouade.SetPrivateMounts(false)() // as in TestHostileCgroupEscape
	if escouade.Containment() != "cgroup" {
		citest.Skip(t, "no cgroup can be made here (descendants held by %q): nothing to escape from", escouade.Containment())
	}
	needPIDNamespaces(t)
	for _, ns := range []bool{true, false} {
		t.Run(map[bool]string{true: "namespace", false: "no-namespace"}[ns], func(t *testing.T) {
			defer escouade.SetPIDNamespaces(ns)()
			before := len(testProcesses())
			procs := filepath.Join(escouade.CgroupParent(), "cgroup.procs")
			marker := filepath.Join(t.TempDir(), "escaper")
			v := newValidator(t)
			withTranscript(t, v)
			h, _ := newHost(t, nil)
			startCommand(t, h, v, "orphan", ``, "orphan-escape", procs, marker)
			pid := pidIn(t, marker)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if own, theirs := unifiedCgroup(os.Getpid()), unifiedCgroup(pid); own == "" || own != theirs {
				t.Fatalf("the escaper is in cgroup %q, not the Host's %q", theirs, own)
			}
			if sid, err := unix.Getsid(pid); err != nil || sid != pid {
				t.Fatalf("the escaper %d is not in a session of its own: %d, %v", pid, sid, err)
			}
			if err := h.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if procfs.Alive(pid) {
				t.Fatalf("the escaper %d outlived Host.Close", pid)
			}
			if left := testProcesses(); len(left) > before {
				t.Errorf("processes of the plugin outlived Host.Close: %v", left)
			}
		})
	}
}

// unifiedCgroup returns the cgroup v2 path of pid, or "".
func unifiedCgroup(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("0::")); ok {
			return string(bytes.TrimSpace(rest))
		}
	}
	return ""
}

// TestHostileShepherdRegicide: a descendant of a plugin tries to kill the
// init of its pid namespace (kill -9 1, kill -9 of the number /proc gives
// it, pidfd_send_signal through /proc/<pid>), then
// starts a setsid grandchild. The init is the plugin's shepherd where no
// cgroup is made (shepherd), the plugin itself where one is (auto): it
// lives on, the plugin answers, and nothing outlives the plugin's stop.
func TestHostileShepherdRegicide(t *testing.T) {
	for _, mode := range []string{"shepherd", "auto"} {
		t.Run(mode, func(t *testing.T) {
			defer escouade.SetContainment(mode)()
			needPIDNamespaces(t)
			before := len(processesBelow(os.Getpid()))
			v := newValidator(t)
			withTranscript(t, v)
			h, j := newHost(t, nil)
			out := filepath.Join(t.TempDir(), "report")
			p := startCommand(t, h, v, "regicide", `,"permissions":{"events":["ticket.report"]}`, "regicide", out)
			r := reportIn(t, out)
			t.Logf("the descendant tried:\n%s", strings.Join(r.lines, "\n"))
			grandchild, self, init := r.num(t, "grandchild"), r.num(t, "self"), r.num(t, "init")
			for _, pid := range []int{grandchild, self} {
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			}
			if !isBelow(init, os.Getpid()) {
				t.Fatalf("the namespace's init %d is not below the Host", init)
			}
			// The plugin still answers, its init alive: a kill that held
			// would have ended it (its own death, or its shepherd's
			// parent-death signal) before this fact.
			h.Fact(context.Background(), "ticket.report", nil, escouade.About{})
			j.wait(t, "regicide", "fact ticket.report")
			if !procfs.Alive(init) {
				t.Fatalf("the init %d was killed from below", init)
			}
			if err := p.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if es := j.find("regicide", "ended unasked"); len(es) > 0 {
				t.Errorf("the plugin ended before its stop: %v", es[0].attrs)
			}
			for _, pid := range []int{grandchild, self} {
				waitFor(t, "process "+strconv.Itoa(pid)+" ended with the plugin", func() bool { return !procfs.Alive(pid) })
			}
			waitFor(t, "no process of the plugin left", func() bool { return len(processesBelow(os.Getpid())) <= before })
		})
	}
}

// TestHostileNamespaceSiblings: a descendant of a plugin tries the other
// ways out of its pid namespace: a namespace of its own below (unshare),
// the Host's, by its /proc/<pid>/ns/pid (setns, nsenter -t <host> -p),
// and the Host itself (ptrace attach, signals by the number /proc gives
// it, pidfd_send_signal). None reaches out, the Host is untouched, and
// nothing outlives the plugin's stop, the nested namespace included. With
// the private mounts, the Host's /proc/<pid> is not even there; without
// them (where they cannot be made), it opens, and the pid namespace alone
// holds.
func TestHostileNamespaceSiblings(t *testing.T) {
	defer escouade.SetContainment("auto")()
	needPIDNamespaces(t)
	for _, tool := range []string{"unshare", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			citest.Skip(t, "no %s here (util-linux) to try the way out with", tool)
		}
	}
	for _, private := range []bool{true, false} {
		t.Run(fmt.Sprintf("private=%v", private), func(t *testing.T) {
			defer escouade.SetPrivateMounts(private)()
			// "": not tried, or, for an open, it opened.
			want := map[string]string{
				"unshare --pid --fork":              "ok",
				"setns to the Host's pid namespace": "",
				"ptrace attach to the Host":         "ESRCH",
				"kill -0 of the Host":               "ESRCH",
				"pidfd_send_signal 0 to the Host":   "",
				"nsenter -t <host> -p":              "exit status 1",
				"open the Host's ns/pid":            "ENOENT",
				"open /proc/<host> as a pidfd":      "ENOENT",
			}
			if !private {
				want["setns to the Host's pid namespace"] = "EINVAL"
				want["pidfd_send_signal 0 to the Host"] = "EINVAL"
				want["open the Host's ns/pid"] = ""
				want["open /proc/<host> as a pidfd"] = ""
			}
			namespaceSiblings(t, want)
		})
	}
}

func namespaceSiblings(t *testing.T, want map[string]string) {
	before := len(processesBelow(os.Getpid()))
	dir := t.TempDir()
	out, nested, entered := filepath.Join(dir, "report"), filepath.Join(dir, "nested"), filepath.Join(dir, "entered")
	v := newValidator(t)
	withTranscript(t, v)
	h, _ := newHost(t, nil)
	self := strconv.Itoa(os.Getpid())
	p := startCommand(t, h, v, "siblings", ``, "ns-siblings", out, self, nested, entered)
	r := reportIn(t, out)
	t.Logf("the descendant tried:\n%s", strings.Join(r.lines, "\n"))
	descendant := r.num(t, "self")
	t.Cleanup(func() { syscall.Kill(descendant, syscall.SIGKILL) })
	for what, want := range want {
		got, tried := r.result(what)
		switch {
		case want == "" && tried:
			t.Errorf("%s: %s", what, got)
		case want != "" && got != want:
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	sleeper := pidIn(t, nested)
	t.Cleanup(func() { syscall.Kill(sleeper, syscall.SIGKILL) })
	if _, err := os.Stat(entered); err == nil {
		t.Errorf("a process started through nsenter into the Host's namespace")
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{sleeper, descendant} {
		waitFor(t, "process "+strconv.Itoa(pid)+" ended with the plugin", func() bool { return !procfs.Alive(pid) })
	}
	waitFor(t, "no process of the plugin left", func() bool { return len(processesBelow(os.Getpid())) <= before })
}

// reportIn waits for a helper's report at path and reads it.
func reportIn(t *testing.T, path string) *report {
	t.Helper()
	var r report
	waitFor(t, "the helper's report", func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		r.lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		return true
	})
	return &r
}

// num returns the pid, as this process's /proc numbers it, of the live
// process that the report names name (a pidRef), or fails.
func (r *report) num(t *testing.T, name string) int {
	t.Helper()
	for _, l := range r.lines {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			if pid := hostPID(v); pid > 0 {
				return pid
			}
			t.Fatalf("the report's %s, %s, is no live process", name, v)
		}
	}
	t.Fatalf("the report names no %s", name)
	return 0
}

// result returns what the report says of what it tried, and whether it
// tried it.
func (r *report) result(what string) (string, bool) {
	for _, l := range r.lines {
		if v, ok := strings.CutPrefix(l, what+": "); ok {
			return v, true
		}
	}
	return "", false
}

// TestShepherdDeathEndsItsNamespace: a shepherd that is the init of its
// pid namespace, killed anyway (from outside: the user, the system), takes
// with it its program and what the program started that left its group
// (setsid, setpgid); the journal says so.
func TestShepherdDeathEndsItsNamespace(t *testing.T) {
	defer escouade.SetContainment("shepherd")()
	needPIDNamespaces(t)
	before := len(processesBelow(os.Getpid()))
	v := newValidator(t)
	withTranscript(t, v)
	h, j := newHost(t, &escouade.Options{CrashBudget: 1})
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := startCommand(t, h, v, "flock", ``, "escapees", pidFile)
	pids := escapeePIDs(t, pidFile)
	escapee, err := procfs.ReadStat(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	program, err := procfs.ReadStat(escapee.PPID)
	if err != nil {
		t.Fatal(err)
	}
	shepherd, err := procfs.ReadStat(program.PPID)
	if err != nil {
		t.Fatal(err)
	}
	if args, _ := procfs.Cmdline(shepherd.PID); len(args) == 0 || args[0] != "escouade-shepherd" {
		t.Fatalf("the program's parent %d is no shepherd: %q", shepherd.PID, args)
	}
	syscall.Kill(shepherd.PID, syscall.SIGKILL)
	for _, pid := range append(pids, program.PID) {
		waitFor(t, "process "+strconv.Itoa(pid)+" ended with the shepherd", func() bool { return !procfs.Alive(pid) })
	}
	e := j.wait(t, "flock", "plugin ended unasked")
	if status := e.attrs["status"]; !strings.Contains(status, "and with it all it held") {
		t.Errorf("the journal says %q", status)
	}
	p.Stop(context.Background())
	waitFor(t, "no process of the plugin left", func() bool { return len(processesBelow(os.Getpid())) <= before })
}

// TestHostDeathEndsNamespaces: a Host killed outright takes with it its
// command plugin's shepherd, the init of its pid namespace (its
// parent-death signal), and with it the plugin and the children that left
// its group (setsid, setpgid): the kernel empties the namespace, no later
// Host needed.
func TestHostDeathEndsNamespaces(t *testing.T) {
	defer escouade.SetContainment("auto")()
	needPIDNamespaces(t)
	host := hostWithEscapees(t, "auto")
	held := processesBelow(host.Process.Pid)
	if len(held) != 4 {
		t.Fatalf("below the Host: %v, want the shepherd, the plugin and two escapees", held)
	}
	host.Process.Signal(syscall.SIGKILL)
	host.Wait()
	for _, pid := range held {
		waitFor(t, "process "+strconv.Itoa(pid)+" ended with its Host", func() bool { return !procfs.Alive(pid) })
	}
	// The dead Host's cgroups, empty now, would be the next Host's to
	// remove: this test's Host swept before it.
	if parent := escouade.CgroupParent(); parent != "" {
		stale, _ := filepath.Glob(filepath.Join(parent, "escouade-*-"+strconv.Itoa(host.Process.Pid)+"-*"))
		for _, dir := range stale {
			// A killed process leaves its cgroup a moment after it is
			// gone from /proc: the cgroup says when it is empty.
			waitFor(t, dir+" empty", func() bool {
				b, _ := os.ReadFile(filepath.Join(dir, "cgroup.events"))
				return bytes.Contains(b, []byte("populated 0"))
			})
			if err := os.Remove(dir); err != nil {
				t.Errorf("the dead Host's cgroup: %v", err)
			}
		}
	}
}

// TestHostileSpawnedCgroupEscape: a proc/spawn program's child writes its
// pid into the Host's own cgroup.procs and double-forks with setsid; the
// last of its line says its pid through a fifo the program reads, and
// the program exits. The program was the init of its pid namespace: the
// escapee is dead by the time proc/exit comes.
func TestHostileSpawnedCgroupEscape(t *testing.T) {
	defer escouade.SetContainment("auto")()
	defer escouade.SetPrivateMounts(false)() // as in TestHostileCgroupEscape
	if escouade.Containment() != "cgroup" {
		citest.Skip(t, "no cgroup can be made here (descendants held by %q): nothing to escape from", escouade.Containment())
	}
	needPIDNamespaces(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	procs := filepath.Join(escouade.CgroupParent(), "cgroup.procs")
	h, _, _, _ := procHost(t)
	v := newValidator(t)
	lp := startLinePlugin(t, h, v, "spawned-escape", `,"permissions":{"commands":["sh -c *"]}`, "")
	script := `"$0" ` + pluginArg + ` orphan-escape-1 "$1" "$2" & read pid <"$2"; echo "$pid"`
	out, code := lp.run(t, map[string]any{"command": "sh", "args": []string{"-c", script, exe, procs, fifo}})
	if !pidRefLine.MatchString(out) || code != 0.0 {
		t.Fatalf("the program said %q, code %v", out, code)
	}
	// Its reference names a live process only if it outlived its program.
	if pid := hostPID(out); pid > 0 {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the escapee %d outlived its program", pid)
	}
}
