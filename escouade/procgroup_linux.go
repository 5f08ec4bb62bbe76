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
	g := &group{exited: make(chan struct{}), cg: newCgroup()}
	if g.cg != nil {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, g.cg.fd
	}
	started := make(chan error, 1)
	go g.run(cmd, started)
	err := <-started
	if err != nil && g.cg != nil {
		// Perhaps a kernel without clone3 into a cgroup (before 5.7): try
		// the group alone, with a copy (a Cmd starts once), and make no
		// more cgroups if that works.
		g.cg.remove()
		attr := *cmd.SysProcAttr
		attr.UseCgroupFD, attr.CgroupFD = false, 0
		retry := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
			Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles,
			SysProcAttr: &attr, WaitDelay: cmd.WaitDelay, Cancel: cmd.Cancel}
		g = &group{exited: make(chan struct{})}
		go g.run(retry, started)
		if err = <-started; err == nil {
			noCgroups.Store(true)
		}
	}
	if err != nil {
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
	g.cg.kill() // and every descendant, wherever it went
	g.reaped = true
	g.mu.Unlock()
	g.cg.remove()
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
		if sig == syscall.SIGKILL {
			g.cg.kill()
		}
	}
}
