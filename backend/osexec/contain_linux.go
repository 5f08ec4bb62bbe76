package osexec

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Containment: every command runs below an init of its own pid namespace,
// so that nothing it starts outlives it.
//
// A process group does not hold what an agent starts: a job that calls
// setsid, or forks twice, leaves the group, and the parent-death signal
// reaches only the leader. A pid namespace holds them all: no process can
// leave one, and when its first process (its init) ends, the kernel kills
// every process in it, whatever session, group or cgroup it moved to and
// whoever adopted it. So each command gets a namespace, and above the
// command its init: /bin/sh running initScript, which starts the command,
// waits for it and exits with its status.
//
// The init is ours, not the command: an init may clear its own
// parent-death signal (prctl) and so survive the runtime, and a command
// cannot do that for another process. Inside its namespace the init gets
// no signal it does not handle, SIGKILL included, so no process below it
// can kill it; from outside, the runtime's SIGKILL to the group kills it,
// and its parent-death signal kills it when the runtime dies, even by
// SIGKILL. Either way the kernel then kills the whole namespace.
//
// The namespace is made with CLONE_NEWPID where the runtime may (it holds
// CAP_SYS_ADMIN: root, or a container that grants it), else together with
// a user namespace of its own (CLONE_NEWUSER) that maps the runtime's uid
// and gid to themselves and nothing else: files are reached as the user,
// while a setuid program (sudo) gains nothing. Where the kernel refuses
// both, the command runs as before, in a process group, and
// [Executor.Contained] says so.
//
// The command's environment passes through the init's (never its argv,
// which any user may read in /proc): the init's shell adds PWD where it
// is missing and may reorder the variables. What else it costs the
// command: argv[0] is the program's resolved path, and
// a command that a signal of its own ends reports the shell's 128+signal
// as its exit code (the init exits with the status its wait gave); a
// signal the runtime sends (Kill, a deadline) is reported as the signal.
// Processes in the namespace see their own pids (the command is pid 2),
// while /proc stays the runtime's.

// initScript is the init's program: it runs the command in the
// foreground (so that the command keeps the init's standard files and
// its signals: an asynchronous command of a shell without job control
// would ignore SIGINT and SIGQUIT, and read /dev/null), waits, and exits
// with its status; a command after it keeps the shell from exec'ing it in
// place, which would make the command the init.
const initScript = `"$@"; exit $?`

// initArg0 names the init in ps.
const initArg0 = "shinken-init"

// Containment modes, tried in this order; the first that works is kept.
const (
	nsUnknown int32 = iota
	nsPid           // CLONE_NEWPID alone
	nsUserPid       // CLONE_NEWUSER|CLONE_NEWPID
	nsNone          // the kernel refuses both
)

// contained spawns argv below an init of a new pid namespace (see above),
// or, where the kernel makes none, as spawn does.
func (e *Executor) contained(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	if e.keepBackground {
		return spawn(path, argv, attr, 0, false, e.user)
	}
	if err := runnable(path, attr.Dir); err != nil {
		return 0, err
	}
	wrapped := append([]string{initArg0, "-c", initScript, initArg0, path}, argv[1:]...)
	for {
		mode := e.nsMode.Load()
		var flags uintptr
		user := false
		switch mode {
		case nsUnknown, nsPid:
			flags = syscall.CLONE_NEWPID
		case nsUserPid:
			if e.user != nil {
				// A user namespace maps the runtime's own ids only: the
				// agent's user cannot be switched to inside it.
				return spawn(path, argv, attr, 0, false, e.user)
			}
			flags, user = syscall.CLONE_NEWPID|syscall.CLONE_NEWUSER, true
		default:
			return spawn(path, argv, attr, 0, false, e.user)
		}
		pid, err := spawn("/bin/sh", wrapped, attr, flags, user, e.user)
		if err == nil || !refusedNamespace(err) {
			if err == nil {
				e.nsDecided.Store(true)
				if mode == nsUnknown {
					e.nsMode.CompareAndSwap(nsUnknown, nsPid)
				}
			}
			return pid, err
		}
		if e.nsDecided.Load() && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS)) {
			// Namespaces were made before: a quota that another holds
			// now is this start's failure, never a reason to make no
			// namespace again.
			return 0, err
		}
		next := nsUserPid
		if mode == nsUserPid {
			next = nsNone
		}
		e.nsMode.CompareAndSwap(mode, next)
		if mode == nsUnknown {
			e.nsMode.CompareAndSwap(nsPid, next)
		}
	}
}

// refusedNamespace says the kernel refused to make the namespace, rather
// than to run the program: EPERM (no capability), EINVAL (no such
// namespace in this kernel), EUSERS or ENOSPC (a namespace quota). Before
// the first namespace is made, a refusal falls back to a weaker mode for
// the rest of the Executor's life; once one was made, a quota that others
// hold is the failure of that start alone (the agent's own processes
// cannot turn containment off by holding the quota).
func refusedNamespace(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.ENOSPC)
}

// Contained reports whether the commands this Executor starts run in a
// pid namespace of their own, so that nothing they start outlives them
// (see the package doc), or, before its first command, whether it will
// try. It is false with KeepBackground, and where the kernel refused.
func (e *Executor) Contained() bool {
	return !e.keepBackground && e.nsMode.Load() != nsNone
}

// idMap maps the runtime's own id, and nothing else, into a user
// namespace.
func idMap(id int) []syscall.SysProcIDMap {
	return []syscall.SysProcIDMap{{ContainerID: id, HostID: id, Size: 1}}
}

// runnable refuses, as execve would, a program that is not there or may
// not be run: the init would only report it as an exit status.
func runnable(path, dir string) error {
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return syscall.ENOENT
	}
	if fi.IsDir() || unix.Access(path, unix.X_OK) != nil {
		return syscall.EACCES
	}
	return nil
}
