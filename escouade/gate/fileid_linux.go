package gate

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"shinken.dev/go/escouade/protocol"
)

// maxProgramSize bounds the file the gate hashes: a larger one is no
// program it knows.
const maxProgramSize = 1 << 30

// identifyKey opens name as execve would (symlinks followed) and
// returns the real file and its identity, or false when it is no
// executable regular file. The hash is of the file opened, whose device
// and inode are the ones given, and whose path the kernel names. The key
// is the status the file had while it was read, when that status is
// settled (see fileKey.settled) and the same once the file is hashed;
// else the zero key, which no file has, so that nothing is cached for
// the file.
func identifyKey(name string) (prog, fileKey, bool) {
	now := time.Now() // before the status: see fileKey.settled
	// Not blocking: a FIFO named as a program would hold the open until
	// a writer came.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return prog{}, fileKey{}, false
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return prog{}, fileKey{}, false
	}
	key := keyOf(&st)
	if key.mode&syscall.S_IFMT != syscall.S_IFREG || key.mode&0o111 == 0 || st.Size > maxProgramSize {
		return prog{}, fileKey{}, false
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(real) {
		if real, err = filepath.EvalSymlinks(name); err != nil {
			return prog{}, fileKey{}, false
		}
	}
	sum, ok := hashFile(f, key, now)
	if !ok {
		return prog{}, fileKey{}, false
	}
	p := prog{path: real, id: &protocol.FileID{Dev: key.dev, Ino: key.ino, SHA256: sum}, size: st.Size}
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || keyOf(&st) != key || !key.settled(now) {
		return p, fileKey{}, true
	}
	return p, key, true
}

// keyOf is the part of a status that changes whenever the file's
// contents, its mode, or (for a folder) its entries do.
func keyOf(st *syscall.Stat_t) fileKey {
	return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size), mode: uint32(st.Mode),
		mtime: int64(st.Mtim.Sec), mtimeNs: int64(st.Mtim.Nsec), ctime: int64(st.Ctim.Sec), ctimeNs: int64(st.Ctim.Nsec)}
}
