package osexec

import (
	"slices"

	"shinken.dev/go/internal/agentuser"
)

// A User is the operating-system user commands run as (see Options.User).
type User struct {
	// Name is the login name, given to commands as USER and LOGNAME.
	Name string
	// UID and GID are the user and primary group ids.
	UID, GID uint32
	// Groups are the supplementary group ids; empty means none.
	Groups []uint32
	// Home is the home folder, given to commands as HOME; a command with
	// no Dir runs in it.
	Home string
}

// userEnv returns base without its HOME, USER and LOGNAME, followed by
// u's.
func (u *User) userEnv(base []string) []string { return agentuser.UserEnv(base, u.Name, u.Home) }

// userDir is the folder a command of the executor's user starts in: the
// request's, or else the user's home (the daemon's own working folder may
// be closed to it).
func (e *Executor) userDir(dir string) string {
	if dir == "" && e.user != nil {
		return e.user.Home
	}
	return dir
}

// clone returns a copy of u that its caller cannot change.
func (u *User) clone() *User {
	if u == nil {
		return nil
	}
	c := *u
	c.Groups = slices.Clone(u.Groups)
	return &c
}
