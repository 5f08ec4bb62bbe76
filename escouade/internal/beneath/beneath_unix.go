//go:build unix

package beneath

import (
	"errors"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func openNoLinks(dir, rel string, flag int, perm os.FileMode, o Options) (*os.File, error) {
	rootFD, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(rootFD)
	flag |= unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW
	parts := strings.Split(rel, "/")
	if rel == "." {
		parts = nil
	}
	// The folders on the way are walked when something is to be done or
	// looked at in each of them, or when the kernel has no openat2.
	if !o.MkDirs && !o.NoPluginFolder {
		if fd, err := openat2Beneath(rootFD, rel, flag, uint32(perm.Perm())); !errors.Is(err, errNoOpenat2) {
			return fdFile(fd, rel, err)
		}
	}
	fd, err := unix.Dup(rootFD)
	if err != nil {
		return nil, err
	}
	if o.NoPluginFolder && holdsManifest(fd) {
		unix.Close(fd)
		return nil, ErrPluginFolder
	}
	if len(parts) == 0 {
		unix.Close(fd)
		nfd, err := unix.Openat(rootFD, ".", flag&^unix.O_CREAT, 0)
		return fdFile(nfd, rel, err)
	}
	for _, part := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if errors.Is(err, unix.ENOENT) && o.MkDirs {
			if err = unix.Mkdirat(fd, part, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
			}
		}
		if err != nil {
			err = walkError(fd, part, err)
			unix.Close(fd)
			return nil, err
		}
		unix.Close(fd)
		fd = next
		if o.NoPluginFolder && holdsManifest(fd) {
			unix.Close(fd)
			return nil, ErrPluginFolder
		}
	}
	defer unix.Close(fd)
	last := parts[len(parts)-1]
	nfd, err := unix.Openat(fd, last, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, walkError(fd, last, err)
	}
	f := os.NewFile(uintptr(nfd), rel)
	if o.NoPluginFolder {
		if fi, err := f.Stat(); err == nil && fi.IsDir() && holdsManifest(nfd) {
			f.Close()
			return nil, ErrPluginFolder
		}
	}
	return f, nil
}

// fdFile makes a file of an open's result.
func fdFile(fd int, name string, err error) (*os.File, error) {
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
			return nil, ErrLinkOnTheWay // RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// walkError says why part, under the folder fd, could not be opened: a
// link is refused as such, whatever errno O_NOFOLLOW gave.
func walkError(fd int, part string, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(fd, part, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrLinkOnTheWay
	}
	return &os.PathError{Op: "open", Path: part, Err: err}
}

// holdsManifest reports whether the folder fd holds a plugin.json: then
// it is a plugin's folder. The name is the one the Host reads, so a
// file system that ignores case finds it in any case.
func holdsManifest(fd int) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, manifestName, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// checkOpenedAt checks that f is the file at want.
func checkOpenedAt(f *os.File, want string) error {
	if p, ok := fdPath(f); ok {
		if p != want {
			return ErrMoved
		}
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	at, err := os.Lstat(want)
	if err != nil || !os.SameFile(fi, at) {
		return ErrMoved
	}
	return nil
}

func LinkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
