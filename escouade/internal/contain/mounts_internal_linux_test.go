package contain

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"shinken.dev/go/internal/citest"
)

// hostileHostEnv marks the run of this test binary that
// TestHostileCgroupFiles starts as a Host, in a cgroup of its own.
const hostileHostEnv = "CONTAIN_TEST_HOSTILE_HOST"

// hostileCgroupScript is a plugin's program that tries, by the machine's
// paths ($2 the Host's cgroup, $3 a sibling's, both under
// /sys/fs/cgroup) and by the Host's /proc/<pid> ($1), to freeze and kill
// its sibling and its Host, to move itself into its Host's cgroup, and to
// read its Host's environment, memory and command line. As root it also remounts the
// hierarchy read-write and mounts it again, and tries once more there. It
// says "done" or "refused" for each, then waits for its input to end. With
// "probe" as $4, it tries only what harms no one: the sibling's freeze,
// the Host's environment.
const hostileCgroupScript = `h=$1 hc=$2 s=$3
w() { if { echo "$1" >"$2"; } 2>/dev/null; then echo "$3: done"; else echo "$3: refused"; fi; }
r() { if head -c1 "$1" >/dev/null 2>&1; then echo "$2: done"; else echo "$2: refused"; fi; }
attack() {
	w 1 "$1$s/cgroup.freeze" "$2 sibling cgroup.freeze"
	[ "$probe" ] && return
	w 1 "$1$s/cgroup.kill" "$2 sibling cgroup.kill"
	w 0 "$1$hc/cgroup.procs" "$2 leave into the host's cgroup"
	w 1 "$1$hc/cgroup.freeze" "$2 host cgroup.freeze"
	w 1 "$1$hc/cgroup.kill" "$2 host cgroup.kill"
}
probe=$4
r /proc/$h/environ "host environ"
[ "$probe" ] || { r /proc/$h/mem "host mem"; r /proc/$h/cmdline "host cmdline"; }
attack /sys/fs/cgroup "by path"
if [ -z "$probe" ]; then
	if read -r l </proc/$h/cgroup 2>/dev/null; then attack /sys/fs/cgroup "by /proc/$h/cgroup"; else echo "host /proc/pid/cgroup: refused"; fi
	if [ "$(id -u)" = 0 ]; then
		mount -o remount,rw /sys/fs/cgroup 2>/dev/null
		attack /sys/fs/cgroup "remounted"
		d=$(mktemp -d) && mount -t cgroup2 cgroup2 "$d" 2>/dev/null
		attack "$d" "mounted again"
		umount "$d" 2>/dev/null; rmdir "$d"
	fi
fi
echo end
read x
`

// TestHostileCgroupFiles: a plugin's program that may start others
// (under its shepherd, and under the fixed init of a Host without
// EngineMain) tries to freeze and kill its sibling and its Host through
// their cgroup files, to leave its cgroup for its Host's, and to read its
// Host's environ, mem and cmdline (issue 39). Each Host runs as a process of this
// test binary in a cgroup made for it, so that what gets through kills
// that Host alone; as root, and as nobody (its cgroup delegated, the way
// systemd delegates one to a user). With the private mounts off, the
// sibling's freeze, and as root the Host's environ, get through, as they
// did before.
func TestHostileCgroupFiles(t *testing.T) {
	if os.Getenv(hostileHostEnv) != "" {
		hostileCgroupHost(t, os.Getenv(hostileHostEnv))
		return
	}
	if CgroupParent() == "" {
		citest.Skip(t, "no cgroup v2 hierarchy this process may write")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"self"}
	if os.Getuid() == 0 {
		citest.NeedPrograms(t, "setpriv")
		users = append(users, "nobody")
	}
	for _, user := range users {
		for _, init := range []string{"shepherd", "fixed", "off"} {
			t.Run(user+"/"+init, func(t *testing.T) {
				bin := self
				if user == "nobody" {
					bin = copyForNobody(t, self)
				}
				out := runHostileHost(t, bin, user, init)
				t.Logf("%s", out)
				switch {
				case bytes.Contains(out, []byte("--- SKIP")):
					citest.Skip(t, "%s", out)
				case !bytes.Contains(out, []byte("--- PASS")):
					t.Fatalf("the Host did not pass:\n%s", out)
				}
			})
		}
	}
}

// runHostileHost runs this test binary as a Host, as user, in a cgroup of
// its own, and returns what it wrote. The cgroup is killed and removed
// after, whatever the Host's plugin did.
func runHostileHost(t *testing.T, bin, user, init string) []byte {
	dir := filepath.Join(CgroupParent(), fmt.Sprintf("contain-test-host-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		// Until its processes have left it: the kernel moves them out
		// as they exit.
		for deadline := time.Now().Add(10 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	argv := []string{bin, "-test.run", "^TestHostileCgroupFiles$", "-test.v"}
	if user == "nobody" {
		// Delegated as systemd delegates: the folder and the files that
		// make and fill its children.
		for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
			if err := os.Chown(filepath.Join(dir, f), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}, argv...)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), hostileHostEnv+"="+init)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	// A frozen Host is killed with its cgroup, which ends its freeze.
	cmd.Cancel = func() error { return os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the Host: %v (a plugin that killed or froze it gets a 137 or a timeout)", err)
	}
	return out
}

// hostileCgroupHost is the Host's side: it starts a sibling and the
// hostile program, and checks what they say and what holds.
func hostileCgroupHost(t *testing.T, init string) {
	if CgroupParent() == "" {
		t.Fatal("the Host has no cgroup it may write in the one made for it")
	}
	switch init {
	case "shepherd":
		reexec.Store(true)
		defer reexec.Store(false)
	case "off":
		defer SetPrivateMounts(false)()
	}
	if !PIDNamespaces() {
		citest.Skip(t, "no pid namespaces here")
	}
	sibCmd := newCmd("/bin/sh", "-c", "read x; exit 0")
	sibIn, err := sibCmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	sibling, err := Start(sibCmd, true)
	if err != nil {
		t.Fatal(err)
	}
	if sibling.cg == nil {
		t.Fatal("the sibling has no cgroup")
	}
	rel := func(dir string) string { return strings.TrimPrefix(dir, "/sys/fs/cgroup") }
	args := []string{"-c", hostileCgroupScript, "hostile", strconv.Itoa(os.Getpid()), rel(CgroupParent()), rel(sibling.cg.dir)}
	if init == "off" {
		args = append(args, "probe")
	}
	cmd := newCmd("/bin/sh", args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hostile, err := Start(cmd, true)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "end" {
		said = append(said, lines.Text())
	}
	t.Logf("the hostile program said:\n%s", strings.Join(said, "\n"))
	events := filepath.Join(sibling.cg.dir, "cgroup.events")
	frozen, _ := os.ReadFile(events)
	if init == "off" {
		// A freeze is done once cgroup.events says so.
		for deadline := time.Now().Add(10 * time.Second); !bytes.Contains(frozen, []byte("frozen 1")) && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
			frozen, _ = os.ReadFile(events)
		}
	}
	inside, _ := os.ReadFile(filepath.Join(hostile.cg.dir, "cgroup.procs"))
	held := slices.Contains(strings.Fields(string(inside)), strconv.Itoa(hostile.Pid()))
	os.WriteFile(filepath.Join(sibling.cg.dir, "cgroup.freeze"), []byte("0"), 0)
	stdin.Close()
	sibIn.Close()
	<-hostile.Done()
	<-sibling.Done()
	if init == "shepherd" && hostile.sh == nil {
		t.Fatal("no shepherd above the hostile program")
	}
	refused := PrivateMountsRefused()
	t.Logf("private mounts refused: %v", refused)
	if init == "off" {
		// The Host's environ is readable from a program of its user
		// in its own user namespace, not from one in a user namespace
		// of its own (an unprivileged Host's): ptrace's rules.
		if !strings.Contains(string(frozen), "frozen 1") || (os.Getuid() == 0) != slices.Contains(said, "host environ: done") {
			t.Errorf("without the private mounts, the sibling's freeze, and the Host's environ as root, did not get through (this test would not bite): %q, %s", said, frozen)
		}
		return
	}
	if refused != nil {
		t.Fatalf("the private mounts were refused: %v", refused)
	}
	if len(said) < 5 {
		t.Fatalf("the hostile program said too little: %q", said)
	}
	for _, line := range said {
		if !strings.HasSuffix(line, ": refused") {
			t.Errorf("got through: %s", line)
		}
	}
	if strings.Contains(string(frozen), "frozen 1") {
		t.Error("the sibling was frozen")
	}
	if !held {
		t.Errorf("the hostile program %d left its cgroup: %q", hostile.Pid(), inside)
	}
	if end := sibling.Result(); !end.Exited || end.Code != 0 {
		t.Errorf("the sibling ended %+v", end)
	}
}
