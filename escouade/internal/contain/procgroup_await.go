//go:build !linux

package contain

import "os/exec"

// await waits for the leader on a goroutine of its own, calls reaped once
// it is reaped (with g.mu held), records how it ended and closes exited:
// the wait of the groups outside Linux, which reap their leader first.
func (g *Group) await(cmd *exec.Cmd, reaped func()) {
	go func() {
		err := cmd.Wait()
		g.mu.Lock()
		reaped()
		g.reaped = true
		g.end = endingOf(cmd.ProcessState, err)
		g.mu.Unlock()
		close(g.exited)
	}()
}
