package escouade

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// startGroup starts cmd in a group of its own, with a parent-death signal,
// and waits for it on a goroutine locked to the thread that started it: the
// signal fires when that thread ends, so it lives as long as the child.
func startGroup(cmd *exec.Cmd) (*group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	g := &group{exited: make(chan struct{})}
	started := make(chan error, 1)
	go g.run(cmd, started)
	if err := <-started; err != nil {
		return nil, err
	}
	return g, nil
}

func (g *group) run(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	g.pgid = cmd.Process.Pid
	started <- nil

	// Wait for the leader to end without reaping it: while it is a zombie
	// its pid still names its group, so the group can be killed, taking
	// with it what the program started, without hitting a stranger.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, g.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	g.mu.Lock()
	syscall.Kill(-g.pgid, syscall.SIGKILL)
	g.reaped = true
	g.mu.Unlock()
	err := cmd.Wait()
	g.mu.Lock()
	g.state, g.err = cmd.ProcessState, err
	g.mu.Unlock()
	close(g.exited)
}

// signal sends sig to the whole group, unless its leader was reaped.
func (g *group) signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		syscall.Kill(-g.pgid, sig)
	}
}
