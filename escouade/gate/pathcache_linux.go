package gate

import (
	"errors"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// What a request costs is its system calls: the PATH searched as the
// shell searches it, one lookup per folder, then the program opened, its
// status and real path read. So the gate caches what it learns, each
// answer with the status that holds it, read again (one stat, no open) at
// every use:
//
//   - a program found at a path: its real path and identity, held by the
//     status of the path's own entry (a symlink retargeted is a new
//     symlink), of the file it names, symlinks followed (a file replaced,
//     by rename or a bind mount, is another inode; one written in place
//     has another size, mtime or ctime), and of its real path, which must
//     name that file still;
//   - no entry of a name in a folder: held by the folder's status (an
//     entry added, removed or renamed changes its mtime and ctime; a
//     folder replaced or mounted over is another inode). A name whose
//     entry is there but no program (a dangling symlink, a file without
//     x) is looked up again each time: what it points to may change
//     without its folder;
//   - no folder at all: held by the folder still missing.
//
// A status is trusted only once settled (fileKey.settled), so a change
// within the clock tick of the one cached is never missed, and only on a
// local file system (localFS), where a stat does not answer from a cache
// that an open would revalidate.

// maxCached bounds each cache; past it the cache starts again empty.
const maxCached = 4096

// A foundProg is a program found at a path, held by key.
type foundProg struct {
	p     prog
	key   fileKey // the file's status
	entry fileKey // the status of the path itself: the file's, or a symlink's
}

// A missing is no entry of a name in a folder, held by the folder's
// key, or by the folder missing too.
type missing struct {
	dir      fileKey
	noFolder bool
}

var pathCache struct {
	sync.Mutex
	programs map[string]foundProg  // by path
	missing  map[[2]string]missing // by folder and name
}

// statKey returns the status of path, symlinks followed.
func statKey(path string) (fileKey, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileKey{}, err
	}
	return keyOf(&st), nil
}

// A dirStatus is a folder's status as one request read it.
type dirStatus struct {
	dir      string
	key      fileKey
	noFolder bool // the folder is missing (ENOENT)
	ok       bool // settled, or the folder missing: a cache may go by it
}

// pathMemo is what one request read of the PATH's folders.
type pathMemo struct {
	dirs []dirStatus
}

// lstatKey returns the status of path itself, a symlink's own.
func lstatKey(path string) (fileKey, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fileKey{}, err
	}
	return keyOf(&st), nil
}

// holds reports whether c still answers for path: path is the same entry
// (a symlink cannot change, only be replaced), it names the same file,
// and so does the real path shown.
func (c foundProg) holds(path string) bool {
	if k, err := lstatKey(path); err != nil || k != c.entry {
		return false
	}
	if c.entry.mode&syscall.S_IFMT == syscall.S_IFLNK {
		if k, err := statKey(path); err != nil || k != c.key {
			return false
		}
	}
	if c.p.path != path {
		if k, err := statKey(c.p.path); err != nil || k != c.key {
			return false
		}
	}
	return true
}

// programAt is identifyKey, cached.
func programAt(path string) (prog, bool) {
	pathCache.Lock()
	c, ok := pathCache.programs[path]
	pathCache.Unlock()
	if ok && c.holds(path) {
		return c.p, true
	}
	// The entry first: one replaced meanwhile does not hold the answer.
	entry, err := lstatKey(path)
	p, key, ok := identifyKey(path)
	pathCache.Lock()
	if err != nil || !ok || key == (fileKey{}) {
		delete(pathCache.programs, path)
	} else {
		if pathCache.programs == nil || len(pathCache.programs) >= maxCached {
			pathCache.programs = make(map[string]foundProg)
		}
		pathCache.programs[path] = foundProg{p: p, key: key, entry: entry}
	}
	pathCache.Unlock()
	return p, ok
}

// folder returns dir's status, read once per request.
func (r *reader) folder(dir string) dirStatus {
	for _, s := range r.dirs { // a PATH's dozen folders: a slice beats a map
		if s.dir == dir {
			return s
		}
	}
	now := time.Now() // before the status: see fileKey.settled
	s := dirStatus{dir: dir}
	k, err := statKey(dir)
	switch {
	case err == nil:
		s.key, s.ok = k, k.settled(now)
	case errors.Is(err, syscall.ENOENT):
		s.noFolder, s.ok = true, true
	}
	r.dirs = append(r.dirs, s)
	return s
}

// inDir returns the program name is in the folder dir, an absolute
// path, or false when it holds none.
func (r *reader) inDir(dir, name string) (prog, bool) {
	s := r.folder(dir)
	at := [2]string{dir, name}
	pathCache.Lock()
	m, known := pathCache.missing[at]
	pathCache.Unlock()
	if known && s.ok && m.noFolder == s.noFolder && m.dir == s.key {
		return prog{}, false
	}
	path := filepath.Join(dir, name)
	if p, ok := programAt(path); ok {
		return p, true
	}
	// Cached only when there is no entry at all, the folder read before
	// the entry: an entry added since changes the folder.
	var st syscall.Stat_t
	if !s.ok || (!s.noFolder && !errors.Is(syscall.Lstat(path, &st), syscall.ENOENT)) {
		return prog{}, false
	}
	if (s.noFolder && !onLocalFS(filepath.Dir(dir))) || (!s.noFolder && !onLocalFS(dir)) {
		return prog{}, false
	}
	pathCache.Lock()
	if pathCache.missing == nil || len(pathCache.missing) >= maxCached {
		pathCache.missing = make(map[[2]string]missing)
	}
	pathCache.missing[at] = missing{dir: s.key, noFolder: s.noFolder}
	pathCache.Unlock()
	return prog{}, false
}
