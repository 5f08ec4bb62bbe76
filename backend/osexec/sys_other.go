//go:build !linux

package osexec

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// exitInfo is how a reaped leader ended.
type exitInfo struct {
	exited bool
	code   int
	signal int
}

// spawn refuses: the guarantees of this package (process groups that die
// with the runtime) rest on Linux's parent-death signal.
func spawn(string, []string, *syscall.ProcAttr, uintptr, bool, *User) (int, error) {
	return 0, fmt.Errorf("process groups with a parent-death signal: %w", errors.ErrUnsupported)
}

func waitExit(int) error                   { return errors.ErrUnsupported }
func reap(int) (exitInfo, error)           { return exitInfo{}, errors.ErrUnsupported }
func killGroup(int) error                  { return errors.ErrUnsupported }
func pipeState(*os.File) (held, data bool) { return false, false }

func (e *Executor) contained(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	return spawn(path, argv, attr, 0, false, e.user)
}

// Contained reports whether commands run in a pid namespace of their own:
// never on this system.
func (e *Executor) Contained() bool { return false }
