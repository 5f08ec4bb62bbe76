//go:build unix

package beneath

import (
	"errors"
	"fmt"
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
	if !o.MkDirs && !o.NoPluginFolder && o.Avoid == nil {
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
	if avoided(fd, o) {
		unix.Close(fd)
		return nil, ErrAvoided
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
		if avoided(fd, o) {
			unix.Close(fd)
			return nil, ErrAvoided
		}
	}
	defer unix.Close(fd)
	last := parts[len(parts)-1]
	nfd, err := unix.Openat(fd, last, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, walkError(fd, last, err)
	}
	f := os.NewFile(uintptr(nfd), rel)
	if avoided(nfd, o) {
		f.Close()
		return nil, ErrAvoided
	}
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

// avoided reports whether the file fd is one o.Avoid holds, after adding
// to it, with AvoidHidden, the hidden entries of fd when it is a folder
// not scanned as it is now. The folder is read from fd itself, so what is
// scanned is what the walk goes through.
func avoided(fd int, o Options) bool {
	if o.Avoid == nil {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return true
	}
	id := identity{uint64(st.Dev), uint64(st.Ino)}
	if o.AvoidHidden && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		msec, mnsec := st.Mtim.Unix()
		csec, cnsec := st.Ctim.Unix()
		if o.Avoid.needsScan(scanKey{id, msec, mnsec, csec, cnsec}) {
			addHidden(fd, id, o.Avoid)
		}
	}
	for _, k := range o.AvoidKeys {
		if k.Dev == id.dev && k.Ino == id.ino {
			return true
		}
	}
	return o.Avoid.Has(id.dev, id.ino)
}

// addHidden adds to set the identities of the folder fd's hidden entries,
// as first seen: id is the folder's.
func addHidden(fd int, id identity, set *Set) {
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(dfd), ".")
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if !strings.HasPrefix(n, ".") {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			set.AddFirst(fmt.Sprintf("%d:%d/%s", id.dev, id.ino, n), uint64(st.Dev), uint64(st.Ino))
		}
	}
}

// IdentityOf returns a file's device and inode numbers.
func IdentityOf(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true
}
