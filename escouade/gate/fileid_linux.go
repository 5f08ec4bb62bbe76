package gate

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"shinken.dev/go/escouade/protocol"
)

// maxProgramSize bounds the file the gate hashes: a larger one is no
// program it knows.
const maxProgramSize = 1 << 30

// identify opens name as execve would (symlinks followed) and returns
// the real file and its identity, or false when it is no executable
// regular file. The hash is of the file opened, whose device and inode
// are the ones given, and whose path the kernel names.
func identify(name string) (prog, bool) {
	// Not blocking: a FIFO named as a program would hold the open until
	// a writer came.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return prog{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 || fi.Size() > maxProgramSize {
		return prog{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return prog{}, false
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(real) {
		if real, err = filepath.EvalSymlinks(name); err != nil {
			return prog{}, false
		}
	}
	key := fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size),
		mtime: int64(st.Mtim.Sec), mtimeNs: int64(st.Mtim.Nsec), ctime: int64(st.Ctim.Sec), ctimeNs: int64(st.Ctim.Nsec)}
	sum, ok := hashFile(f, key)
	if !ok {
		return prog{}, false
	}
	return prog{path: real, id: &protocol.FileID{Dev: key.dev, Ino: key.ino, SHA256: sum}, size: st.Size}, true
}
