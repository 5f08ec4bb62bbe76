package contain

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
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
		citest.Skip(t, "no setpriv to start this test without CAP_SYS_ADMIN, and this process holds it")
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
	defer SetUserNamespaces(false)() // the Host may not make them either way
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

// TestHostPIDOfChild: a process finds the pid /proc gives its child
// (outside a namespace, the one it got from fork), also when it has
// another child: a namespace's init adopts the orphans of a program that
// forked and exited before the init looked (issue 43's "sh could not
// start"), and the old check, "the only child", failed then.
func TestHostPIDOfChild(t *testing.T) {
	// The test's goroutine is the thread that starts the children, as a
	// shepherd's is.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command("/bin/sh", "-c", "read x")
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { w.Close(); cmd.Wait() }()
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if got := hostPIDOfChild("/proc", cmd.Process.Pid); got != cmd.Process.Pid {
			t.Errorf("hostPIDOfChild(%d) = %d", cmd.Process.Pid, got)
		}
	}
	if got := hostPIDOfChild("/proc", os.Getpid()); got != 0 {
		t.Errorf("hostPIDOfChild of no child = %d, want 0", got)
	}
}

// asNobodyEnv marks the run of this test binary that TestUserNamespaces
// starts as an unprivileged user.
const asNobodyEnv = "CONTAIN_TEST_AS_NOBODY"

// TestUserNamespaces: a Host without CAP_SYS_ADMIN, allowed user
// namespaces, makes each program the init of a pid namespace in a user
// namespace of its own: the program is pid 1 there and still the Host's
// user, and what it started in a session of its own ends with it. It runs
// this test again as nobody (setpriv), from a copy of the test binary
// that nobody may run, where the check is made.
func TestUserNamespaces(t *testing.T) {
	if asNobody(t, "TestUserNamespaces") {
		userNamespaces(t)
	}
}

func userNamespaces(t *testing.T) {
	if mayMakePIDNamespace() {
		t.Fatal("an unprivileged Host thinks it may make pid namespaces")
	}
	restore := SetUserNamespaces(false)
	if PIDNamespaces() {
		t.Fatal("pid namespaces without CAP_SYS_ADMIN, and no user namespaces allowed")
	}
	restore()
	defer func() { pidnsRefused.Store(nil) }()
	if !PIDNamespaces() {
		t.Fatal("no pid namespaces with user namespaces allowed")
	}
	for _, mounts := range []bool{false, true} {
		t.Run(fmt.Sprintf("mounts=%v", mounts), func(t *testing.T) { userNamespaceProgram(t, mounts) })
	}
}

// userNamespaceProgram is TestUserNamespaces's check of one program, with
// the private mounts or without. With them, the pid the program reads in
// its /proc is its namespace's, no process of the Host's: the check that
// its setsid child ended is made without them.
func userNamespaceProgram(t *testing.T, mounts bool) {
	defer SetPrivateMounts(mounts)()
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", `echo $$; id -u; setsid sleep 300 >/dev/null 2>&1 & read p _ </proc/self/stat; read c </proc/self/task/$p/children; echo $c`)
	cmd.Stdout = &out
	g, err := Start(cmd, true)
	if err != nil {
		t.Fatal(err)
	}
	<-g.Done()
	if err := PIDNamespaceRefused(); err != nil {
		citest.Skip(t, "the kernel makes no user namespace for an unprivileged process here: %v", err)
	}
	if end := g.Result(); !end.Exited || end.Code != 0 || !g.ns {
		t.Fatalf("ended %+v, in a namespace: %v", end, g.ns)
	}
	lines := strings.Fields(out.String())
	// pid 2: without a shepherd (no EngineMain here), the Host's fixed
	// init is pid 1, above the program.
	if len(lines) != 3 || lines[0] != "2" || lines[1] != strconv.Itoa(os.Getuid()) {
		t.Fatalf("the program said %q: want its pid 2 and uid %d", out.String(), os.Getuid())
	}
	t.Logf("the program said %q", out.String())
	escapee, _ := strconv.Atoi(lines[2])
	if escapee <= 0 {
		t.Fatalf("the program said %q", out.String())
	}
	if mounts {
		return
	}
	if procfs.Alive(escapee) {
		syscall.Kill(escapee, syscall.SIGKILL)
		t.Fatalf("the setsid child %d outlived its program", escapee)
	}
}

// quotaEnv marks the run of this test binary that TestNamespaceQuota
// starts in a user namespace of its own, whose quotas it may set.
const quotaEnv = "CONTAIN_TEST_QUOTA"

// TestNamespaceQuota: a pid-namespace quota that is used up (another
// plugin holds it) fails that start, and is not taken for a kernel that
// refuses namespaces: once it is free again, the next start gets one. The
// quota is held for real: this test runs again in a user namespace of its
// own (unshare -Ur), where it lowers max_pid_namespaces (and, the way of
// a Host without CAP_SYS_ADMIN, max_user_namespaces) to 0, then raises
// it. It runs as this process's user and, when that is root, as nobody.
func TestNamespaceQuota(t *testing.T) {
	if os.Getenv(quotaEnv) == "1" {
		namespaceQuotaHeld(t)
		return
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		citest.Skip(t, "no unshare to run this test in a user namespace of its own")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, argv ...string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), quotaEnv+"=1")
		cmd.Dir = filepath.Dir(argv[len(argv)-4])
		out, err := cmd.CombinedOutput()
		switch {
		case bytes.Contains(out, []byte("--- SKIP: TestNamespaceQuota")):
			citest.Skip(t, "%s", out)
		case err != nil || !bytes.Contains(out, []byte("--- PASS: TestNamespaceQuota")):
			t.Fatalf("%v\n%s", err, out)
		}
	}
	t.Run("user", func(t *testing.T) {
		run(t, unshare, "-Ur", self, "-test.run", "^TestNamespaceQuota$", "-test.v")
	})
	t.Run("nobody", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("this process is not root: the user's run is the unprivileged one")
		}
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			citest.Skip(t, "no setpriv to run this test as nobody")
		}
		run(t, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", unshare, "-Ur", copyForNobody(t, self), "-test.run", "^TestNamespaceQuota$", "-test.v")
	})
}

// copyForNobody copies the test binary where nobody may run it.
// asNobody runs test name again as nobody (setpriv), from a copy of this
// test binary that nobody may run, and fails t unless it passed there. It
// reports whether the caller is to make the check itself: in that run, or
// when this process is not root to begin with.
func asNobody(t *testing.T, name string) (here bool) {
	t.Helper()
	if os.Getenv(asNobodyEnv) == name || os.Getuid() != 0 {
		return true
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		citest.Skip(t, "no setpriv to run this test as an unprivileged user, and this process is root")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", copyForNobody(t, self), "-test.run", "^"+name+"$", "-test.v")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), asNobodyEnv+"="+name)
	out, err := cmd.CombinedOutput()
	switch {
	case bytes.Contains(out, []byte("--- SKIP: "+name)):
		citest.Skip(t, "as nobody:\n%s", out)
	case err != nil || !bytes.Contains(out, []byte("--- PASS: "+name)):
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
	return false
}

func copyForNobody(t *testing.T, self string) string {
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "contain.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func namespaceQuotaHeld(t *testing.T) {
	if !mayMakePIDNamespace() {
		citest.Skip(t, "no CAP_SYS_ADMIN in a user namespace of its own: the kernel makes none here")
	}
	defer SetMode("auto")() // a cgroup where one can be made, else the group: no shepherd (no EngineMain)
	defer func() { pidnsRefused.Store(nil); pidnsMade.Store(false) }()
	setQuota := func(name, v string) {
		t.Helper()
		if err := os.WriteFile("/proc/sys/user/"+name, []byte(v), 0); err != nil {
			t.Fatal(err)
		}
	}
	start := func() (*Group, error) {
		g, err := Start(newCmd("/bin/sh", "-c", "true"), true)
		if err == nil {
			<-g.Done()
		}
		return g, err
	}
	for _, way := range []struct{ name, quota string }{
		{"pid namespace", "max_pid_namespaces"},
		{"user and pid namespaces (no CAP_SYS_ADMIN)", "max_user_namespaces"},
	} {
		if way.quota == "max_user_namespaces" {
			old := mayMakePIDNamespace
			mayMakePIDNamespace = func() bool { return false }
			defer func() { mayMakePIDNamespace = old }()
		}
		pidnsMade.Store(false) // the held quota comes first: no namespace made yet
		setQuota(way.quota, "0")
		_, err := start()
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%s, quota held: start = %v, want it failed with ENOSPC", way.name, err)
		}
		t.Logf("%s, quota held: %v", way.name, err)
		if err := PIDNamespaceRefused(); err != nil || !PIDNamespaces() {
			t.Fatalf("%s: a held quota turned namespaces off: %v", way.name, err)
		}
		setQuota(way.quota, "1000")
		g, err := start()
		if err != nil || !g.ns {
			t.Fatalf("%s, quota free: start = %v, in a namespace: %v", way.name, err, err == nil && g.ns)
		}
		if end := g.Result(); !end.Exited || end.Code != 0 {
			t.Fatalf("%s: ended %+v", way.name, end)
		}
	}
}
