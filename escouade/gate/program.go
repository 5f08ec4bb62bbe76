package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/escouade/protocol"
)

// A prog is the file a name runs, as execve opens it: its real path
// (symlinks resolved) and its identity.
type prog struct {
	path string
	id   *protocol.FileID
	size int64
}

// find returns the program name runs on path, or false when the gate
// cannot know which file that is: a relative or empty PATH entry reached
// before the program is found (the shell searches it from a folder the
// line may change), a relative name after the line changed folder, or no
// file at all (the line may create it before it runs).
func (r *reader) find(name, path string) (prog, bool) {
	if name == "" {
		return prog{}, false
	}
	relative := strings.Contains(name, "/") && !filepath.IsAbs(name)
	key := name + "\x00" + path
	if p, ok := r.found[key]; ok && !relative {
		return p, p.path != ""
	}
	p, ok := r.lookup(name, path)
	if !relative {
		if r.found == nil {
			r.found = map[string]prog{}
		}
		r.found[key] = p
	}
	return p, ok
}

// lookup is find, uncached.
func (r *reader) lookup(name, path string) (prog, bool) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			if r.moved {
				return prog{}, false
			}
			name = filepath.Join(r.dir(), name)
		}
		return programAt(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			return prog{}, false
		}
		// The shell skips what is no executable file, as programAt does.
		if p, ok := r.inDir(dir, name); ok {
			return p, true
		}
	}
	return prog{}, false
}

// top returns the real file and identity of the program an exec names,
// "" and nil when none is found.
func (r *reader) top(name string) (string, *protocol.FileID) {
	p, _ := r.find(name, r.path)
	return p.path, p.id
}

// dir is the folder relative names are read from.
func (r *reader) dir() string {
	if r.cwd != "" {
		if filepath.IsAbs(r.cwd) {
			return r.cwd
		}
		wd, _ := os.Getwd()
		return filepath.Join(wd, r.cwd)
	}
	wd, _ := os.Getwd()
	return wd
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

// A dirStatus is a folder's status as one request read it.
type dirStatus struct {
	dir      string
	key      fileKey
	noFolder bool // the folder is missing (ENOENT)
	ok       bool // settled, or the folder missing: a cache may go by it
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
