package contain

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"shinken.dev/go/internal/citest"
)

// tracerEnv marks the run of this test binary that TestFixedInitNotDumpable
// starts as a program below the fixed init: it tries to trace its parent.
const tracerEnv = "CONTAIN_TEST_TRACER"

// TestFixedInitNotDumpable: below the fixed init of a Host without
// EngineMain (no shepherd), run unprivileged, the program, with the user's
// rights and no more, cannot ptrace its init (PTRACE_SEIZE, as strace -p
// does: a tracer could clear the init's parent-death signal, and so
// outlive the Host), nor read its environ or mem in /proc (the same check
// guards them), and the init is not dumpable (its /proc files are root's,
// seen from the Host); with the private mounts, the same holds, and the
// program has a /proc of its own, holds no capability, and cannot unmount
// the /proc and cgroup hierarchy its init mounted. Root may trace anything
// (CAP_SYS_PTRACE), so the check runs as nobody, from a copy of this test
// binary, where the init and the program are in a user and pid namespace
// of their own.
func TestFixedInitNotDumpable(t *testing.T) {
	if asNobody(t, "TestFixedInitNotDumpable") {
		for _, mounts := range []bool{false, true} {
			t.Run(fmt.Sprintf("mounts=%v", mounts), func(t *testing.T) { fixedInitNotDumpable(t, mounts) })
		}
	}
}

func fixedInitNotDumpable(t *testing.T, mounts bool) {
	defer SetMode("shepherd")() // never a cgroup, and no shepherd: this binary did not AllowShepherd
	defer SetPrivateMounts(mounts)()
	defer func() { pidnsRefused.Store(nil) }()
	if !PIDNamespaces() {
		citest.Skip(t, "the Host makes no pid namespace here, so no init")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := newCmd(self)
	cmd.Env = []string{tracerEnv + "=1", tracerCgroupEnv + "=" + cgroup2Mount()}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Start(cmd, true)
	if err != nil {
		t.Fatal(err)
	}
	// The program says what it could do, then waits for its input to
	// end: until then its init is alive, for the Host to look at.
	var said []string
	for lines := bufio.NewScanner(stdout); lines.Scan() && lines.Text() != "end"; {
		said = append(said, lines.Text())
	}
	var st unix.Stat_t
	owner := "gone"
	if err := unix.Stat(fmt.Sprintf("/proc/%d/environ", g.Pid()), &st); err == nil {
		owner = strconv.Itoa(int(st.Uid))
	}
	stdin.Close()
	<-g.Done()
	if err := PIDNamespaceRefused(); err != nil {
		citest.Skip(t, "the kernel makes no user namespace for an unprivileged process here: %v", err)
	}
	if !g.ns {
		t.Fatal("the program was started in no pid namespace, so below no init")
	}
	if refused := PrivateMountsRefused(); mounts && refused != nil {
		t.Fatalf("the private mounts were refused: %v", refused)
	}
	// A process that is not dumpable has its /proc files owned by the
	// root of its user namespace, which has none mapped: root's.
	if owner != "0" {
		t.Errorf("the init's environ is owned by %s, not root: the init is dumpable", owner)
	}
	proc := "machine's"
	if mounts {
		proc = "own"
	}
	want := []string{"proc: " + proc, "parent: 1", "environ: refused", "mem: refused", "ptrace seize: EPERM", "unmount /proc: EPERM"}
	if cgroup2Mount() != "" {
		want = append(want, "unmount cgroups: EPERM")
	}
	// Without the mounts, no setpriv clears the bounding set.
	want = append(want, "capabilities: none", map[bool]string{false: "bounding set: not empty", true: "bounding set: empty"}[mounts])
	if !slices.Equal(said, want) {
		t.Errorf("the program, on its init, as uid %d:\n%s\nwant:\n%s", os.Getuid(), strings.Join(said, "\n"), strings.Join(want, "\n"))
	}
}

// tracerCgroupEnv gives the program of TestFixedInitNotDumpable where the
// cgroup hierarchy is mounted.
const tracerCgroupEnv = "CONTAIN_TEST_TRACER_CGROUPS"

// traceParent is the program of TestFixedInitNotDumpable: it says whether
// /proc is its own, its parent's pid in its namespace, then tries to open
// its environ and mem, to trace it, and to unmount /proc and the cgroup
// hierarchy, and says whether it holds a capability in any set. It says
// "end", then waits for its input to end.
func traceParent() int {
	defer io.Copy(io.Discard, os.Stdin)
	defer fmt.Println("end")
	// The init's sealed copy of its shell is not the program's.
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); strings.HasPrefix(l, "/memfd:") {
			fmt.Printf("descriptor %s: %s\n", fd.Name(), l)
		}
	}
	// In the machine's /proc, /proc/self is not the namespace's pid, and
	// the parent's number is stat's, not getppid's.
	self, _ := os.Readlink("/proc/self")
	if self == strconv.Itoa(os.Getpid()) {
		fmt.Println("proc: own")
	} else {
		fmt.Println("proc: machine's")
	}
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 3
	}
	pp := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))[1]
	fmt.Printf("parent: %d\n", os.Getppid()) // 1: the init of its namespace
	for _, what := range []string{"environ", "mem"} {
		if f, err := os.Open("/proc/" + pp + "/" + what); err != nil {
			fmt.Printf("%s: refused\n", what)
		} else {
			f.Close()
			fmt.Printf("%s: readable\n", what)
		}
	}
	// PTRACE_SEIZE stops nothing, and the tracer's exit detaches it.
	if err := unix.PtraceSeize(os.Getppid()); err != nil {
		fmt.Printf("ptrace seize: %s\n", unix.ErrnoName(err.(unix.Errno)))
	} else {
		fmt.Println("ptrace seize: ok")
	}
	for _, m := range [][2]string{{"/proc", "/proc"}, {"cgroups", os.Getenv(tracerCgroupEnv)}} {
		if m[1] == "" {
			continue
		}
		if err := unix.Unmount(m[1], unix.MNT_DETACH); err != nil {
			fmt.Printf("unmount %s: %s\n", m[0], unix.ErrnoName(err.(unix.Errno)))
		} else {
			fmt.Printf("unmount %s: done\n", m[0])
		}
	}
	// The bounding set limits what a program with file capabilities, or
	// the namespace's root, gains by an exec.
	caps, bounding := "none", "empty"
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		k, v, _ := strings.Cut(line, ":")
		switch {
		case !strings.HasPrefix(k, "Cap") || strings.Trim(v, "\t\n0") == "":
		case k == "CapBnd":
			bounding = "not empty"
		default:
			caps = strings.TrimSpace(line)
		}
	}
	fmt.Printf("capabilities: %s\nbounding set: %s\n", caps, bounding)
	return 0
}

// TestUserNSMountsProbe: the probe that decides whether a fixed init in a
// user namespace of its own makes the private mounts passes with the
// machine's mount and setpriv, and fails, saying why, where a mount
// fails, where "setpriv" does not run the program, and where it runs it
// with the capabilities the init held.
func TestUserNSMountsProbe(t *testing.T) {
	citest.NeedPrograms(t, "mount", "setpriv")
	m, _ := exec.LookPath("mount")
	p, _ := exec.LookPath("setpriv")
	keeps := filepath.Join(t.TempDir(), "setpriv-keeps")
	// Runs what follows "--", with what it holds.
	if err := os.WriteFile(keeps, []byte("#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, mount, setpriv, why string
	}{
		{"setpriv", m, p, ""},
		{"mount fails", "/bin/false", p, "exit status 70"},
		{"program not run", m, "/bin/true", "its program did not run"},
		{"capabilities kept", m, keeps, "exit status 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := probeUserNSMounts(c.mount, c.setpriv)
			switch {
			case c.why == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
				t.Fatalf("got %v, want an error saying %q", err, c.why)
			}
			t.Logf("%v", err)
		})
	}
}
