package beneath

import (
	"errors"
	"os"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

var errNoOpenat2 = errors.New("no openat2")

// noOpenat2 is set once the kernel says it has no openat2 (before 5.6, or
// a seccomp filter that refuses it).
var noOpenat2 atomic.Bool

// openat2Beneath opens rel under the folder dirFD with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS: no .., no absolute path, no link, no /proc magic
// link on the way is followed, whatever is swapped in.
func openat2Beneath(dirFD int, rel string, flag int, perm uint32) (int, error) {
	if noOpenat2.Load() {
		return -1, errNoOpenat2
	}
	how := unix.OpenHow{
		Flags:   uint64(flag),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flag&unix.O_CREAT != 0 {
		how.Mode = uint64(perm)
	}
	for {
		fd, err := unix.Openat2(dirFD, rel, &how)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue // EAGAIN: a rename raced the resolution; try again
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
			return -1, errNoOpenat2
		}
		return fd, err
	}
}

// fdPath returns the path the kernel keeps for f.
func fdPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return "", false
	}
	return p, true
}

// OpenForStat opens a file to stat it: O_PATH needs no right to read it,
// and opens a socket or a device without touching it.
const OpenForStat = unix.O_PATH
