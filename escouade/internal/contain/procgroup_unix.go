//go:build unix && !linux

package contain

import (
	"os/exec"
	"syscall"
)

// startGroup starts cmd in a group of its own and waits for it on a
// goroutine of its own. Whether the program may start others makes no
// difference here: the group is all there is.
func Start(cmd *exec.Cmd, _ bool) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A session of its own (so a group whose id is its pid) and no
	// controlling terminal; Setpgid with Setsid would be EPERM.
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = false, 0
	cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Foreground = false, false
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{pgid: cmd.Process.Pid, exited: make(chan struct{})}
	// Without a wait that leaves the leader unreaped, the group is killed
	// just after: its id could only name a stranger if the system reused
	// it in between.
	g.await(cmd, func() { syscall.Kill(-g.pgid, syscall.SIGKILL) })
	return g, nil
}

// signal sends sig to the whole group, unless its leader was reaped.
func (g *Group) Signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		syscall.Kill(-g.pgid, sig)
	}
}
