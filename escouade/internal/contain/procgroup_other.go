//go:build !unix

package contain

import (
	"os"
	"os/exec"
	"syscall"
)

// startGroup starts cmd. Without process groups, only the program itself
// can be killed.
func Start(cmd *exec.Cmd, _ bool) (*Group, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{pgid: cmd.Process.Pid, exited: make(chan struct{})}
	g.await(cmd, func() {})
	return g, nil
}

// signal ends the program, whatever sig asks: there is no gentler way to
// ask here.
func (g *Group) Signal(syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		// The pid cannot name another process yet: exec holds the
		// leader's handle until it is reaped.
		if p, err := os.FindProcess(g.pgid); err == nil {
			p.Kill()
		}
	}
}
