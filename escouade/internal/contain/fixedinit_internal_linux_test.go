package contain

import (
	"bytes"
	"fmt"
	"os"
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
// guards them). Root may (CAP_SYS_PTRACE), so the check runs as nobody,
// from a copy of this test binary, where the init and the program are in
// a user and pid namespace of their own.
func TestFixedInitNotDumpable(t *testing.T) {
	if asNobody(t, "TestFixedInitNotDumpable") {
		fixedInitNotDumpable(t)
	}
}

func fixedInitNotDumpable(t *testing.T) {
	defer SetMode("shepherd")() // never a cgroup, and no shepherd: this binary did not AllowShepherd
	defer func() { pidnsRefused.Store(nil) }()
	if !PIDNamespaces() {
		citest.Skip(t, "the Host makes no pid namespace here, so no init")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := newCmd(self)
	cmd.Env = []string{tracerEnv + "=1"}
	cmd.Stdout, cmd.Stderr = &out, &out
	g, err := Start(cmd, true)
	if err != nil {
		t.Fatal(err)
	}
	<-g.Done()
	if err := PIDNamespaceRefused(); err != nil {
		citest.Skip(t, "the kernel makes no user namespace for an unprivileged process here: %v", err)
	}
	if !g.ns {
		t.Fatal("the program was started in no pid namespace, so below no init")
	}
	want := "parent: 1\nenviron: refused\nmem: refused\nptrace seize: EPERM\n"
	if got := out.String(); got != want {
		t.Errorf("the program, on its init, as uid %d:\n%s\nwant:\n%s", os.Getuid(), got, want)
	}
}

// traceParent is the program of TestFixedInitNotDumpable: it says the
// memfds it holds, its parent's pid in its namespace, then tries to open its environ and
// mem, and to trace it.
func traceParent() int {
	// The init's sealed copy of its shell is not the program's.
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); strings.HasPrefix(l, "/memfd:") {
			fmt.Printf("descriptor %s: %s\n", fd.Name(), l)
		}
	}
	// /proc is the machine's here (no private mounts without a shepherd,
	// unprivileged): the parent's number in it is stat's, not getppid's.
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
	return 0
}
