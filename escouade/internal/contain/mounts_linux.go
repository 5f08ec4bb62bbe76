package contain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Where a program (or its shepherd) is the init of a pid namespace, it
// also gets a mount namespace and a cgroup namespace of its own
// (CLONE_NEWNS, CLONE_NEWCGROUP, in the same clone, into its cgroup), and
// its init, before it starts the program, makes two mounts there:
//
//   - a /proc of the pid namespace, in place of the machine's: the Host's
//     pids, and every process outside the namespace, are not in it, so no
//     /proc/<pid>/environ, cmdline or mem of the Host can be opened;
//   - the unified cgroup hierarchy, mounted again read-only in the cgroup
//     namespace, in place of the machine's: its root is the program's own
//     cgroup, so the Host's and its siblings' cgroup.kill, cgroup.freeze
//     and cgroup.procs are not there to be written, and /proc/self/cgroup
//     reads "0::/". A root program that mounts the hierarchy again, or
//     remounts it read-write, still sees its own cgroup alone, and the
//     kernel refuses a move into a cgroup outside the namespace's root.
//
// The machine's mounts are first made slaves of the Host's, so that none
// of this reaches the Host, while mounts the machine makes later still
// show. Where the init holds CAP_SYS_ADMIN of the machine (root), the
// machine's /proc and cgroup mounts are detached first, so that a root
// program cannot unmount the new ones to find them below; in a user
// namespace of its own (an unprivileged Host) they cannot be detached
// (the kernel locks them), and the new ones cover them, which a process
// without CAP_SYS_ADMIN there cannot undo.
//
// Where the mounts cannot be made (the kernel refuses a /proc in a
// user namespace when the machine's is partly covered, as in many
// containers), the program starts with the machine's, and
// PrivateMountsRefused says why, for the Host to journal once.

// privateMountsOff is set by SetPrivateMounts(false).
var privateMountsOff atomic.Bool

// privateMountsRefused holds why an init could not make its mounts, the
// first time one could not.
var privateMountsRefused atomic.Pointer[error]

// usePrivateMounts reports whether a program started now in a pid
// namespace also gets the mounts above.
func usePrivateMounts() bool { return !privateMountsOff.Load() }

// SetPrivateMounts makes the programs started from now on in a pid
// namespace get a mount and cgroup namespace with a /proc and cgroup
// hierarchy of their own (on, the default), or the machine's (off). It
// returns what sets it back. Tests that need the machine's /proc or
// cgroup hierarchy in a program turn it off.
func SetPrivateMounts(on bool) (restore func()) {
	old := privateMountsOff.Swap(!on)
	return func() { privateMountsOff.Store(old) }
}

// PrivateMountsRefused returns why a program in a pid namespace started
// with the machine's /proc and cgroup hierarchy rather than its own (journal
// it once), or nil.
func PrivateMountsRefused() error {
	if p := privateMountsRefused.Load(); p != nil {
		return *p
	}
	return nil
}

// refusePrivateMounts keeps err as why the mounts were not made, the
// first time.
func refusePrivateMounts(err error) {
	privateMountsRefused.CompareAndSwap(nil, &err)
}

// mountsAttr adds to attr, for a program or shepherd that is the init of
// a pid namespace, the mount and cgroup namespaces, and, in a user
// namespace, CAP_SYS_ADMIN kept across the init's exec (ambient), which
// the init needs for its mounts and drops before it starts the program.
func mountsAttr(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWNS | syscall.CLONE_NEWCGROUP
	if attr.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_SYS_ADMIN)
	}
}

// makePrivateMounts makes, in the calling init's mount namespace, the
// mounts above. It returns a descriptor of the machine's /proc, for the
// pids the Host knows, which the caller closes once done with it (a root
// program could reach it in /proc/1/fd), or -1 when /proc is still the
// machine's; an error when the program must not start (the machine's /proc
// was detached, and no other could be mounted); and refused, why the
// mounts were not made, when the program may start with the machine's.
func makePrivateMounts() (machineProc int, refused, err error) {
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return -1, fmt.Errorf("the mounts cannot be made slaves: %w", err), nil
	}
	cgroups := cgroup2Mount()
	fd, err := unix.Open("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("the machine's /proc: %w", err), nil
	}
	detached := unix.Unmount("/proc", unix.MNT_DETACH) == nil
	if err := unix.Mount("proc", "/proc", "proc", flags, ""); err != nil {
		unix.Close(fd)
		if detached {
			return -1, nil, fmt.Errorf("no /proc of the namespace could be mounted: %w", err)
		}
		return -1, fmt.Errorf("no /proc of the namespace could be mounted: %w", err), nil
	}
	machineProc = fd
	if cgroups == "" {
		return machineProc, nil, nil
	}
	own, _ := os.ReadFile("/proc/self/cgroup")
	detached = unix.Unmount(cgroups, unix.MNT_DETACH) == nil
	if strings.TrimSpace(string(own)) == "0::/" {
		err = unix.Mount("cgroup2", cgroups, "cgroup2", flags|unix.MS_RDONLY, "")
	} else {
		// No cgroup of its own: the namespace's root is the Host's
		// cgroup, which it must not see. An empty folder covers it.
		err = errors.New("no cgroup of its own")
	}
	if err != nil {
		if err2 := unix.Mount("tmpfs", cgroups, "tmpfs", flags|unix.MS_RDONLY, "size=0,mode=0555"); err2 != nil && !detached {
			return machineProc, fmt.Errorf("the cgroup hierarchy could not be covered: %w", err2), nil
		}
	}
	return machineProc, nil, nil
}

// dropAmbient clears the calling thread's ambient capabilities, so that a
// program it starts gains none (mountsAttr's CAP_SYS_ADMIN in a user
// namespace).
func dropAmbient() {
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
}

// Without EngineMain there is no shepherd, and a program that may start
// others would be the init of its pid namespace, which may clear its own
// parent-death signal. The Host puts a fixed init above it instead:
// /bin/sh running shInitScript, with the Host's parent-death signal, which
// makes the mounts above where it may, starts the program in the
// foreground and exits with its status. It is an init: from its namespace
// it gets no signal it does not handle, SIGKILL included.
//
// The shell makes the mounts with mount and umount, found in PATH, in two
// cases. Where the Host is root of the machine's user namespace, it
// detaches the machine's /proc and cgroup mounts as the shepherd does
// (shInitMountsScript). Where the init runs in a user namespace of its
// own (an unprivileged Host), it holds CAP_SYS_ADMIN of that namespace
// across its exec (ambient, with CAP_SETPCAP), covers the machine's
// mounts, which the kernel locks, with its own (shUserNSMountsScript),
// and starts the program through setpriv, found in PATH, with its
// bounding, inheritable and ambient sets cleared: the program holds no
// capability in the namespace, not even through a file's or as its root,
// so it cannot unmount the covers, which, made in its own mount
// namespace, are not locked. The Host tries that once with a program
// that checks it holds no capability (userNSMountsRefused); where it
// fails (no setpriv, a /proc the kernel refuses in a user namespace when
// the machine's is partly covered), the programs start with the
// machine's mounts, and PrivateMountsRefused says why.
//
// A shell has no prctl to make itself undumpable, and a program of the
// same user could ptrace a dumpable init and clear its parent-death
// signal. The kernel makes a process undumpable when it executes a file
// its user may not read, so where the init runs in a user namespace of its
// own, it runs in two steps: /bin/sh, which has dropped the capabilities
// the new user namespace gave it but CAP_SYS_ADMIN and CAP_SETPCAP for its
// mounts (neither reads a file it may not), executes a copy of itself that
// its user may execute but not read (a sealed memfd, mode 0111, made for
// each start: sealedShell), which makes the mounts. The kernel writes the
// namespace's uid_map before the first step, while the init is still
// dumpable, as it must (a non-dumpable process's map cannot be written);
// the second step is not: no process of its namespace may trace it, read
// its environ or mem (TestFixedInitNotDumpable), and its program, which the
// second step starts, is dumpable again, as it would be anyway. Where the
// copy cannot be made (no memfd, memfds not executable: vm.memfd_noexec),
// the init stays dumpable; the cgroup, which the program cannot leave in
// its namespace, still holds it, and the next Host's sweep ends it. A root
// Host's init is root's, which any root program may trace anyway.

// shInitPath is the init's shell.
const shInitPath = "/bin/sh"

// shInitArg0 names the init in ps.
const shInitArg0 = "escouade-init"

// shInitScript runs the program ("$@") in the foreground, and a command
// after it keeps the shell from exec'ing it in place (which would make it
// the init). The scripts with mounts make them in a subshell, which then
// becomes the program (exec), so that the program is pid 2 whatever ran
// before it; with them, $1 to $3 are the paths of mount and umount and
// where the cgroup hierarchy is mounted; a mount that fails ends the init
// with exitBoot, before the program starts.
const (
	shInitScript       = `"$@"; exit $?`
	shInitMountsScript = `m=$1 u=$2 c=$3; shift 3
(
	"$m" --make-rslave / && "$u" -l /proc && "$m" -t proc -o nosuid,nodev,noexec proc /proc || exit 70
	if [ -n "$c" ]; then
		"$u" -l "$c"
		read -r own </proc/self/cgroup
		if [ "$own" = 0::/ ]; then "$m" -t cgroup2 -o ro,nosuid,nodev,noexec cgroup2 "$c"
		else "$m" -t tmpfs -o ro,size=0,mode=0555 tmpfs "$c"; fi || exit 70
	fi
	exec "$@"
); exit $?`
)

// shUserNSMountsScript is the init's script in a user namespace of its
// own: $1 to $3 are the paths of mount and setpriv and where the cgroup
// hierarchy is mounted. The machine's mounts cannot be detached there;
// the new ones cover them. The cgroup hierarchy is mounted again with the
// program's cgroup as root where it has one, else covered by an empty
// folder. As in shInitMountsScript, a subshell mounts, then becomes the
// program, through setpriv.
const shUserNSMountsScript = `m=$1 p=$2 c=$3; shift 3
(
	"$m" --make-rslave / && "$m" -t proc -o nosuid,nodev,noexec proc /proc || exit 70
	if [ -n "$c" ]; then
		read -r own </proc/self/cgroup
		{ [ "$own" = 0::/ ] && "$m" -t cgroup2 -o ro,nosuid,nodev,noexec cgroup2 "$c" 2>/dev/null; } ||
			"$m" -t tmpfs -o ro,size=0,mode=0555 tmpfs "$c" || exit 70
	fi
	exec "$p" --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"
); exit $?`

// inInitialUserNamespace reports whether the Host runs in the machine's
// user namespace, whose uid_map maps every id to itself: there a root
// shell may detach the machine's /proc, which a user namespace locks.
var inInitialUserNamespace = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295"
})

// mountTools are the paths of mount and umount, or "" when either is
// missing.
var mountTools = sync.OnceValues(func() (string, string) {
	m, err1 := exec.LookPath("mount")
	u, err2 := exec.LookPath("umount")
	if err1 != nil || err2 != nil {
		return "", ""
	}
	return m, u
})

// setprivTool is the path of setpriv, or "" where it is missing.
var setprivTool = sync.OnceValue(func() string {
	p, _ := exec.LookPath("setpriv")
	return p
})

// shSealedScript is the undumpable init's first step: $1 is its sealed
// copy's descriptor, which the second step closes before it runs $2, the
// init's script. A shell names descriptors up to 9 alone.
const shSealedScript = `k=$1 s=$2; shift 2; exec /proc/self/fd/$k -c "exec $k<&-; $s" "$0" "$@"`

// shSealedFD bounds the sealed copy's descriptor: the program's own
// files come first, from 3.
const shSealedFD = 9

// shInited returns the command that runs target below a fixed init, and
// whether that init makes the private mounts; sealed, when not nil, is
// the init's sealed copy, which the caller closes once the command started.
func shInited(target *exec.Cmd, mounts bool) (cmd *exec.Cmd, _ bool, sealed *os.File) {
	path := target.Path
	if !strings.Contains(path, "/") {
		path = "./" + path // exec's meaning (in the folder), not a search of PATH
	}
	userNS := target.SysProcAttr != nil && target.SysProcAttr.Cloneflags&syscall.CLONE_NEWUSER != 0
	script, params := shInitScript, []string(nil)
	if mounts {
		m, u := mountTools()
		switch {
		case m != "" && userNS:
			if err := userNSMountsRefused(); err != nil {
				mounts = false
				refusePrivateMounts(err)
			} else {
				script, params = shUserNSMountsScript, []string{m, setprivTool(), cgroup2Mount()}
			}
		case m != "" && mayMakePIDNamespace() && inInitialUserNamespace():
			script, params = shInitMountsScript, []string{m, u, cgroup2Mount()}
		default:
			mounts = false
			refusePrivateMounts(errors.New("without EngineMain, the init is a shell, which mounts only where it finds mount and umount, and the Host is root of the machine's user namespace or makes a user namespace for each program"))
		}
	}
	args := append([]string{shInitArg0, "-c", script, shInitArg0}, params...)
	files := target.ExtraFiles
	if userNS && 3+len(files) <= shSealedFD {
		if f, err := sealedShell(); err == nil {
			k := strconv.Itoa(3 + len(files))
			args = append([]string{shInitArg0, "-c", shSealedScript, shInitArg0, k, script}, params...)
			files, sealed = append(slices.Clip(files), f), f
		}
	}
	args = append(args, path)
	cmd = &exec.Cmd{
		Path: shInitPath, Args: append(args, target.Args[1:]...), Env: target.Env, Dir: target.Dir,
		Stdin: target.Stdin, Stdout: target.Stdout, Stderr: target.Stderr, ExtraFiles: files,
		SysProcAttr: target.SysProcAttr, WaitDelay: target.WaitDelay, Cancel: target.Cancel,
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	return cmd, mounts, sealed
}

// fixedInitMountsAttr adds to attr what the fixed init needs for its
// mounts: mountsAttr's, and, in a user namespace, CAP_SETPCAP kept across
// its exec too, with which setpriv clears the program's bounding set.
func fixedInitMountsAttr(attr *syscall.SysProcAttr) {
	mountsAttr(attr)
	if attr.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_SETPCAP)
	}
}

// userNSMountsProbe is the program of userNSMountsRefused: it says so
// where it holds no capability at all, and fails otherwise.
const userNSMountsProbe = `while read -r k v; do
	case $k in CapInh:|CapPrm:|CapEff:|CapBnd:|CapAmb:) [ "$v" = 0000000000000000 ] || { echo "$k $v"; exit 3; };; esac
done </proc/self/status
echo "no capability"`

// userNSMountsProbeWait bounds the probe, a few programs that mount and
// exit: past it, the mounts are taken as refused.
const userNSMountsProbeWait = 10 * time.Second

// userNSMountsRefused returns why a fixed init in a user namespace of its
// own cannot make the private mounts and start its program with no
// capability, or nil. It asks probeUserNSMounts once and keeps the answer:
// what it tries (setpriv, mounts the kernel allows in a user namespace) is
// the machine's.
var userNSMountsRefused = sync.OnceValue(func() error {
	m, _ := mountTools()
	p := setprivTool()
	if m == "" || p == "" {
		return errors.New("without EngineMain, an unprivileged Host's init is a shell, which makes the mounts only where it finds mount, umount and setpriv (util-linux)")
	}
	return probeUserNSMounts(m, p)
})

// probeUserNSMounts starts the fixed init once in a user namespace of its
// own, as a start would, with the paths of mount and setpriv, and
// userNSMountsProbe as its program, and returns why that failed, or nil.
func probeUserNSMounts(mount, setpriv string) error {
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	fixedInitMountsAttr(attr)
	ctx, cancel := context.WithTimeout(context.Background(), userNSMountsProbeWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, shInitPath, "-c", shUserNSMountsScript, shInitArg0, mount, setpriv, cgroup2Mount(), shInitPath, "-c", userNSMountsProbe)
	cmd.Args[0] = shInitArg0
	cmd.Dir, cmd.SysProcAttr = "/", attr
	// The parent-death signal fires when the thread that started the
	// probe ends: it stays until the probe did.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil && !bytes.HasSuffix(out, []byte("no capability\n")):
		err = errors.New("its program did not run")
	case errors.As(err, &exit) && exit.ExitCode() == exitBoot:
		err = fmt.Errorf("a mount failed: %w", err)
	}
	if err != nil {
		return fmt.Errorf("without EngineMain, an unprivileged Host's init could not make the private mounts and start its program with no capability (%w): %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// shImage is the init's shell, read once.
var shImage = sync.OnceValues(func() ([]byte, error) { return os.ReadFile(shInitPath) })

// sealedShell returns a copy of the init's shell that its user may
// execute but not read, which no one may change (sealed), as an O_PATH
// descriptor: the undumpable init's second step. A benchmark replaces it,
// to start the init as it was before.
var sealedShell = func() (*os.File, error) {
	image, err := shImage()
	if err != nil {
		return nil, err
	}
	// No fork while the copy is open for writing: a child that held it
	// would make its execution fail (ETXTBSY).
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	const flags = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate(shInitArg0, flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3, every memfd may be executed
		fd, err = unix.MemfdCreate(shInitArg0, flags)
	}
	if err != nil {
		return nil, fmt.Errorf("no memfd for the init: %w", err)
	}
	defer unix.Close(fd)
	for b := image; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			return nil, fmt.Errorf("the init's copy: %w", err)
		}
		b = b[n:]
	}
	if err := unix.Fchmod(fd, 0o111); err != nil {
		return nil, fmt.Errorf("the init's copy: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return nil, fmt.Errorf("the init's copy cannot be sealed: %w", err)
	}
	path, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the init's copy: %w", err)
	}
	return os.NewFile(uintptr(path), shInitArg0), nil
}

// mountNSRefused is set once the kernel refused the mount and cgroup
// namespaces at the first start: no more are tried.
var mountNSRefused atomic.Bool
