package session

import (
	"os/exec"
	"runtime"
)

// The session's processes get a parent-death signal, so that none outlives
// a daemon that is killed outright. The kernel sends it when the thread
// that started the process exits, not the process: Go ends a thread when a
// goroutine locked to it returns, which any goroutine of the program may
// do. So the session starts its processes from one goroutine of its own,
// locked to its thread for the session's whole life.

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// spawner starts the commands it is sent until the channel closes. It
// returns with its thread still locked, so the thread ends with it, after
// Close has stopped every process it started.
func spawner(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}

// startCmd starts cmd on the spawner's thread.
func (s *Session) startCmd(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s.spawns <- spawnRequest{cmd, done}
	return <-done
}
