package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
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
	var fs syscall.Statfs_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || keyOf(&st) != key || !key.settled(now) ||
		syscall.Fstatfs(int(f.Fd()), &fs) != nil || !localFS[int64(fs.Type)] {
		return p, fileKey{}, true
	}
	return p, key, true
}

// localFS are the file systems whose status is the file's, by magic
// number (statfs(2)): ext4, XFS, btrfs, tmpfs, ramfs, overlayfs,
// squashfs, F2FS, ZFS. On a network or FUSE file system (NFS, CIFS, 9p,
// virtiofs…) a stat may answer from a cache that an open revalidates,
// so nothing there is cached by its status.
var localFS = map[int64]bool{0xEF53: true, 0x58465342: true, 0x9123683E: true, 0x01021994: true,
	0x858458f6: true, 0x794c7630: true, 0x73717368: true, 0xF2F52010: true, 0x2fc12fc1: true}

// onLocalFS reports whether path is on one of localFS.
func onLocalFS(path string) bool {
	var fs syscall.Statfs_t
	return syscall.Statfs(path, &fs) == nil && localFS[int64(fs.Type)]
}

// keyOf is the part of a status that changes whenever the file's
// contents, its mode, or (for a folder) its entries do.
func keyOf(st *syscall.Stat_t) fileKey {
	return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size), mode: uint32(st.Mode),
		mtime: int64(st.Mtim.Sec), mtimeNs: int64(st.Mtim.Nsec), ctime: int64(st.Ctim.Sec), ctimeNs: int64(st.Ctim.Nsec)}
}

// maxHashed bounds the cache of programs' hashes; past it the cache
// starts again empty, which costs one hash per program.
const maxHashed = 4096

// fileKey is what must stay the same for a file's hash to hold: a file
// rewritten in place changes its size, its mtime or its ctime.
type fileKey struct {
	dev, ino, size uint64
	mode           uint32
	mtime, ctime   int64
	mtimeNs        int64
	ctimeNs        int64
}

// A change is stamped with the kernel's coarse clock, which lags the
// time by up to a tick (1 to 10 ms), and some file systems keep whole
// seconds (FAT two): a file changed again within the tick of its last
// change keeps its status, ctime included. So a status is settled, and
// the gate caches by it, only when its ctime is older than these
// margins before a time taken before the status was read; a later change
// then cannot leave it as it is.
const (
	settleTick   = 50 * time.Millisecond
	settleCoarse = 2*time.Second + settleTick // no nanoseconds kept
)

// settled reports whether no change after now can leave k as it is. A
// ctime ahead of now (a clock set back) is not settled.
func (k fileKey) settled(now time.Time) bool {
	margin := settleTick
	if k.ctimeNs == 0 && k.mtimeNs == 0 {
		margin = settleCoarse
	}
	return time.Unix(k.ctime, k.ctimeNs).Before(now.Add(-margin))
}

var hashes struct {
	sync.Mutex
	m map[fileKey]string
}

// hashFile returns the hex SHA-256 of f, cached under key when key is
// settled (a file changed again within its clock tick keeps its key).
// now is a time taken before key was.
func hashFile(f *os.File, key fileKey, now time.Time) (string, bool) {
	hashes.Lock()
	sum, ok := hashes.m[key]
	hashes.Unlock()
	if ok {
		return sum, true
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false
	}
	sum = hex.EncodeToString(h.Sum(nil))
	if !key.settled(now) {
		return sum, true
	}
	hashes.Lock()
	if hashes.m == nil || len(hashes.m) >= maxHashed {
		hashes.m = make(map[fileKey]string)
	}
	hashes.m[key] = sum
	hashes.Unlock()
	return sum, true
}
