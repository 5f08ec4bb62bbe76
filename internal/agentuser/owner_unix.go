//go:build unix

package agentuser

import (
	"io/fs"
	"slices"
	"syscall"
)

// owner is fi's owner and group, when the system says.
func owner(fi fs.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}

// Credential is the credential a command of u is started with.
func (u *User) Credential() *syscall.Credential {
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: slices.Clone(u.Groups)}
}
