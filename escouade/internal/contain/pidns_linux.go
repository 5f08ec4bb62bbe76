package contain

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"shinken.dev/go/internal/procfs"
)

// Where the Host may (CAP_SYS_ADMIN in its user namespace; without it, in
// a user namespace of the namespace's own, where the kernel lets an
// unprivileged process make one: SetUserNamespaces), each program
// that may start others is started as the first process, the init, of a
// pid namespace of its own (CLONE_NEWPID; with clone3 into its cgroup
// where there is one), or its shepherd is, where there is no cgroup. No
// process can leave its pid namespace: setns and unshare of a pid
// namespace change only where a process's children are born, and only
// towards namespaces below its own. And when a namespace's init ends, the
// kernel kills every process in it, whatever cgroup it moved itself to,
// whatever session or group it is in, whoever adopted it. So a program's
// end, or its kill, ends everything it started, the process that wrote
// itself into another cgroup's cgroup.procs and then lost its parentage
// included; and a shepherd that is the init cannot be killed from below
// (an init gets from its own namespace only the signals it handles,
// SIGKILL never), nor die without taking all it holds.
//
// A program that is an init is one: it gets SIGTERM from the Host only
// if it handles it (SIGKILL always), none of the signals it sends itself
// or that its descendants send it unless it handles them, and it adopts
// the orphans of its namespace (which stay zombies until it ends, if it
// never waits for them). A shepherd is an init that handles all of that,
// and its program is an ordinary process below it. Pids are the
// namespace's for the processes in it (getpid, fork, $$, $!), while /proc
// stays the machine's and shows the Host's numbers: a program that reads
// pids in /proc reads numbers its kill does not name.
//
// The Host's engines, which start nothing, get no namespace.

// pidnsOff is set by SetPIDNamespaces(false): the tests start programs
// without a namespace, on a machine that could make them.
var pidnsOff atomic.Bool

// pidnsRefused holds why the kernel would not make a pid namespace, once
// a start with one failed where the same start without one worked: no
// more are tried.
var pidnsRefused atomic.Pointer[error]

// pidnsMade is set once a program started in a pid namespace: the kernel
// makes them, and a later refusal is that start's failure, never a reason
// to make no more.
var pidnsMade atomic.Bool

// mayMakePIDNamespace reports whether the Host holds CAP_SYS_ADMIN in its
// user namespace, which CLONE_NEWPID needs: without it no clone is tried.
var mayMakePIDNamespace = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("CapEff:")); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(string(rest)), 16, 64)
			return err == nil && caps&(1<<21) != 0 // CAP_SYS_ADMIN
		}
	}
	return false
})

// userNSOff is set by SetUserNamespaces(false): a Host without
// CAP_SYS_ADMIN makes no pid namespaces, rather than each in a user
// namespace of its own (the default).
var userNSOff atomic.Bool

// usePIDNamespace reports whether a program that may start others is
// started now in a pid namespace of its own.
func usePIDNamespace() bool {
	return containment(containMode.Load()) != containGroup && !pidnsOff.Load() &&
		pidnsRefused.Load() == nil && (mayMakePIDNamespace() || !userNSOff.Load())
}

// namespaceAttr sets in attr the clone flags of a pid namespace when ns,
// and clears them otherwise: CLONE_NEWPID, and, for a Host without
// CAP_SYS_ADMIN that was allowed one (SetUserNamespaces), CLONE_NEWUSER
// with the Host's own uid and gid mapped to themselves (and nothing else),
// setgroups denied, as an unprivileged process must.
func namespaceAttr(attr *syscall.SysProcAttr, ns bool) {
	attr.Cloneflags &^= syscall.CLONE_NEWPID | syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWCGROUP
	attr.UidMappings, attr.GidMappings, attr.GidMappingsEnableSetgroups = nil, nil, false
	attr.AmbientCaps = nil
	if !ns {
		return
	}
	attr.Cloneflags |= syscall.CLONE_NEWPID
	if !mayMakePIDNamespace() {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
}

// namespaceRefused reports whether err, a failed start with CLONE_NEWPID,
// may be the kernel's refusal of the namespace (a seccomp policy, a
// security module, no right, too many namespaces) rather than the
// program's own failure, which a start without the flag would repeat.
func namespaceRefused(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS:
		return true
	}
	return false
}

// namespaceQuota reports whether err, a failed start with CLONE_NEWPID,
// is a quota's: the user's pid or user namespaces are all in use
// (ENOSPC), or user namespaces are nested too deep (EUSERS). Another
// plugin may hold them; once it ends, namespaces can be made again.
func namespaceQuota(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS)
}

// PIDNamespaces reports whether the programs started now that may start
// others are each the init of a pid namespace of their own, or have a
// shepherd that is.
func PIDNamespaces() bool { return usePIDNamespace() }

// PIDNamespaceRefused returns why no more pid namespaces are made: the
// kernel refused one, and the programs are started without (journal it
// once). It returns nil while they are made, and where they are not even
// tried (the Host lacks CAP_SYS_ADMIN: PIDNamespaces says so).
func PIDNamespaceRefused() error {
	if p := pidnsRefused.Load(); p != nil {
		return *p
	}
	return nil
}

// SetPIDNamespaces makes the programs started from now on get a pid
// namespace where one can be made (on, the default) or never (off). It
// returns what sets it back. Tests use it to try both ways on a machine
// where namespaces work.
func SetPIDNamespaces(on bool) (restore func()) {
	old := pidnsOff.Swap(!on)
	return func() { pidnsOff.Store(old) }
}

// SetUserNamespaces lets a Host without CAP_SYS_ADMIN make the pid
// namespaces of its programs (on), each in a user namespace of its own
// that maps the Host's uid and gid to themselves, where the kernel lets
// an unprivileged process make one (the default); off makes none there.
// A program in a user namespace is no longer quite the user's: a setuid
// or file-capability program it runs (sudo, su, ping where it has
// capabilities, fusermount) does not gain its rights, other users' ids
// show as the overflow id (nobody), and its supplementary groups as
// nogroup, while its access to files stays the user's. It returns what
// sets it back.
func SetUserNamespaces(on bool) (restore func()) {
	old := !userNSOff.Swap(!on)
	return func() { userNSOff.Store(!old) }
}

// hostPIDOfChild returns, for a process that is the init of a pid
// namespace, the pid that /proc (the Host's, where the Host reads it) gives
// its child whose pid in the namespace is target, or 0. The candidates are
// the children of the calling thread, which started it, as /proc lists
// them, or, on a kernel that lists none (no CONFIG_PROC_CHILDREN), the
// processes whose parent is this one; the child is the one whose last
// NSpid is target. Being the only child is no proof: the program may have
// forked and exited already, and an init adopts the orphans of its
// namespace, on the same thread's list (issue 43: a proc/spawn of
// "cmd & exit" failed 1 in 5 under load with "could not start"). proc is
// where the Host's /proc is reached: "/proc", or, once the namespace has a
// /proc of its own, a descriptor of the machine's kept open.
func hostPIDOfChild(proc string, target int) int {
	var candidates []int
	if b, err := os.ReadFile(proc + "/thread-self/children"); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				candidates = append(candidates, pid)
			}
		}
	} else {
		self, err := os.Readlink(proc + "/self")
		if err != nil {
			return 0
		}
		ppid, err := strconv.Atoi(self)
		if err != nil {
			return 0
		}
		all, _ := procfs.All()
		for _, p := range all {
			if p.PPID == ppid {
				candidates = append(candidates, p.PID)
			}
		}
	}
	for _, pid := range candidates {
		if innermostPID(proc, pid) == target {
			return pid
		}
	}
	return 0
}

// innermostPID returns the pid that process pid (as /proc numbers it) has
// in its own pid namespace, the last of its status's NSpid, or 0.
func innermostPID(proc string, pid int) int {
	b, err := os.ReadFile(proc + "/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
			f := strings.Fields(string(rest))
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}
