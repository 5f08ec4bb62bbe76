package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

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
// returns what sets it back. Tests whose plugins report their pids as the
// Host's /proc numbers them turn it off.
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
// makes the mounts above where it may (the Host holds CAP_SYS_ADMIN, and
// finds mount and umount), starts the program in the foreground and exits
// with its status. It is an init: from its namespace it gets no signal it
// does not handle, SIGKILL included. What it cannot be is undumpable (a
// shell has no prctl): a program of the same user may ptrace it and clear
// its parent-death signal; the cgroup, which the program cannot leave in
// its namespace, still holds it, and the next Host's sweep ends it.

// shInitPath is the init's shell.
const shInitPath = "/bin/sh"

// shInitArg0 names the init in ps.
const shInitArg0 = "escouade-init"

// shInitScript runs the program ("$@") in the foreground, and a command
// after it keeps the shell from exec'ing it in place (which would make it
// the init). With mounts, $1 to $3 are the paths of mount and umount and
// where the cgroup hierarchy is mounted; a mount that fails ends the init
// with exitBoot, before the program starts.
const (
	shInitScript       = `"$@"; exit $?`
	shInitMountsScript = `m=$1 u=$2 c=$3; shift 3
"$m" --make-rslave / && "$u" -l /proc && "$m" -t proc -o nosuid,nodev,noexec proc /proc || exit 70
if [ -n "$c" ]; then
	"$u" -l "$c"
	read -r own </proc/self/cgroup
	if [ "$own" = 0::/ ]; then "$m" -t cgroup2 -o ro,nosuid,nodev,noexec cgroup2 "$c"
	else "$m" -t tmpfs -o ro,size=0,mode=0555 tmpfs "$c"; fi || exit 70
fi
` + shInitScript
)

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

// shInited returns the command that runs target below a fixed init, and
// whether that init makes the private mounts.
func shInited(target *exec.Cmd, mounts bool) (*exec.Cmd, bool) {
	path := target.Path
	if !strings.Contains(path, "/") {
		path = "./" + path // exec's meaning (in the folder), not a search of PATH
	}
	args := []string{shInitArg0, "-c", shInitScript, shInitArg0, path}
	if mounts {
		if m, u := mountTools(); m != "" && mayMakePIDNamespace() && inInitialUserNamespace() {
			args = []string{shInitArg0, "-c", shInitMountsScript, shInitArg0, m, u, cgroup2Mount(), path}
		} else {
			mounts = false
			refusePrivateMounts(errors.New("without EngineMain, the init is a shell, which mounts only where the Host is root of the machine's user namespace and finds mount and umount"))
		}
	}
	cmd := &exec.Cmd{
		Path: shInitPath, Args: append(args, target.Args[1:]...), Env: target.Env, Dir: target.Dir,
		Stdin: target.Stdin, Stdout: target.Stdout, Stderr: target.Stderr, ExtraFiles: target.ExtraFiles,
		SysProcAttr: target.SysProcAttr, WaitDelay: target.WaitDelay, Cancel: target.Cancel,
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	return cmd, mounts
}

// mountNSRefused is set once the kernel refused the mount and cgroup
// namespaces at the first start: no more are tried.
var mountNSRefused atomic.Bool
