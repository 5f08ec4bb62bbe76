//go:build unix && !linux

package guard

import (
	"errors"
	"io/fs"
	"syscall"
)

// stampOfInfo is fi's stamp: its device, inode, size and times.
func stampOfInfo(fi fs.FileInfo) (stamp, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}, errors.New("no device and inode on this system")
	}
	return stampOfStat(st), nil
}

// stampOfStat gives no ctime here: every file a request names without
// an identity is hashed again.
func stampOfStat(st *syscall.Stat_t) stamp {
	return stamp{dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size)}
}
