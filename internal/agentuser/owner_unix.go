//go:build unix

package agentuser

import (
	"io/fs"
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
