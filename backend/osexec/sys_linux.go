package osexec

import (
	"errors"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitInfo is how a reaped leader ended.
type exitInfo struct {
	exited bool
	code   int
	signal int
}

// spawn starts the child as the leader of a new session, and so of a new
// process group whose id is its pid, so that one signal reaches everything
// it starts and it holds no controlling terminal (no TIOCSTI into the
// daemon's); it asks the kernel to SIGKILL it if the spawning thread dies:
// the runtime's death then takes the leader with it. Setpgid is not asked
// with Setsid: a session leader leads its group already, and setpgid after
// setsid fails with EPERM. flags are namespaces to make it in (see
// contain_linux.go), with a user namespace mapping the runtime's own ids
// when userns is set. The child runs as u, when u is not nil.
func spawn(path string, argv []string, attr *syscall.ProcAttr, flags uintptr, userns bool, u *User) (int, error) {
	attr.Sys = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: flags, Credential: u.credential()}
	if userns {
		attr.Sys.UidMappings = idMap(os.Getuid())
		attr.Sys.GidMappings = idMap(os.Getgid())
	}
	pid, _, err := syscall.StartProcess(path, argv, attr)
	return pid, err
}

// waitExit blocks until the child has exited, without reaping it.
func waitExit(pid int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// reap collects the exited child's status and frees its pid.
func reap(pid int) (exitInfo, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return exitInfo{}, err
		}
		switch {
		case ws.Exited():
			return exitInfo{exited: true, code: ws.ExitStatus()}, nil
		case ws.Signaled():
			return exitInfo{signal: int(ws.Signal())}, nil
		}
		return exitInfo{}, nil
	}
}

// killGroup sends SIGKILL to the group led by pid. A group that is already
// gone is not an error.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// pipeState reports whether the pipe f reads from still has a writer and
// whether it holds data. Linux reports POLLHUP on a pipe's read end once
// no writer is left, even while data remains to be read.
func pipeState(f *os.File) (held, data bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err == nil {
				held = fds[0].Revents&unix.POLLHUP == 0
				data = fds[0].Revents&unix.POLLIN != 0
			}
			return
		}
	})
	return held, data
}

// credential is the credential a command of u starts with; nil for the
// runtime's own user.
func (u *User) credential() *syscall.Credential {
	if u == nil {
		return nil
	}
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: slices.Clone(u.Groups)}
}
