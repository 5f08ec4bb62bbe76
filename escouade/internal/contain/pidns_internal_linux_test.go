package contain

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// noAdminEnv marks the run of this test binary that TestPIDNamespaceRefused
// starts without CAP_SYS_ADMIN.
const noAdminEnv = "CONTAIN_TEST_NO_SYS_ADMIN"

// TestPIDNamespaceRefused: where the kernel refuses a pid namespace (here,
// a Host without CAP_SYS_ADMIN that tries anyway), a program starts
// without one, the refusal is kept for the Host to journal, and no more
// namespaces are tried; a Host that knows it lacks the right tries none.
// It runs this test again without CAP_SYS_ADMIN (setpriv drops it from the
// bounding set), where the check is made.
func TestPIDNamespaceRefused(t *testing.T) {
	if os.Getenv(noAdminEnv) == "1" {
		pidNamespaceRefused(t)
		return
	}
	if !mayMakePIDNamespace() {
		// Already without the right: the check can be made here.
		pidNamespaceRefused(t)
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to start this test without CAP_SYS_ADMIN, and this process holds it")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--bounding-set", "-sys_admin", "--", self, "-test.run", "^TestPIDNamespaceRefused$", "-test.v")
	cmd.Env = append(os.Environ(), noAdminEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestPIDNamespaceRefused")) {
		t.Fatalf("without CAP_SYS_ADMIN: %v\n%s", err, out)
	}
}

func pidNamespaceRefused(t *testing.T) {
	if mayMakePIDNamespace() {
		t.Fatal("a Host without CAP_SYS_ADMIN thinks it may make pid namespaces")
	}
	if PIDNamespaces() {
		t.Fatal("PIDNamespaces is true without CAP_SYS_ADMIN")
	}
	// Try anyway, as a Host whose capabilities say yes and whose kernel
	// says no would (a seccomp policy, a security module).
	old := mayMakePIDNamespace
	mayMakePIDNamespace = func() bool { return true }
	defer func() { mayMakePIDNamespace = old; pidnsRefused.Store(nil) }()
	restore := SetMode("auto") // a cgroup where one can be made; no shepherd (no EngineMain)
	defer restore()
	noCgroupsBefore := noCgroups.Load()
	defer noCgroups.Store(noCgroupsBefore)

	for i := range 2 {
		var out bytes.Buffer
		cmd := exec.Command("/bin/sh", "-c", "echo $$")
		cmd.Stdout = &out
		g, err := Start(cmd, true)
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		<-g.Done()
		if end := g.Result(); !end.Exited || end.Code != 0 {
			t.Fatalf("start %d ended %+v", i, end)
		}
		if g.ns {
			t.Errorf("start %d: in a pid namespace the kernel refused", i)
		}
		// Its pid is the Host's: it is no namespace's init.
		if pid, _ := strconv.Atoi(strings.TrimSpace(out.String())); pid != g.Pid() || pid == 1 {
			t.Errorf("start %d: the program says it is %q, the Host says %d", i, out.String(), g.Pid())
		}
		err = PIDNamespaceRefused()
		if err == nil || !strings.Contains(err.Error(), "operation not permitted") {
			t.Fatalf("after start %d, the refusal kept is %v", i, err)
		}
		if PIDNamespaces() {
			t.Errorf("after start %d, namespaces are still tried", i)
		}
	}
}

// TestHostPIDOfChild: a process finds the pid /proc gives its only child
// (outside a namespace, the one it got from fork).
func TestHostPIDOfChild(t *testing.T) {
	// The test's goroutine is the thread that starts the child, as a
	// shepherd's is.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command("/bin/sh", "-c", "read x")
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { w.Close(); cmd.Wait() }()
	if got := hostPIDOfChild(); got != cmd.Process.Pid {
		t.Errorf("hostPIDOfChild = %d, want %d", got, cmd.Process.Pid)
	}
}
