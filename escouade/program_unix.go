//go:build unix

package escouade

import (
	"os"
	"syscall"
)

// devIno returns a file's device and inode numbers.
func devIno(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
