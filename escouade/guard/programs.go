package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"shinken.dev/go/escouade/protocol"
)

// defaultPath is where names are found with no PATH at all, as a POSIX
// shell finds them.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// A program is one allowed file.
type program struct {
	path  string          // its real path
	id    protocol.FileID // pinned when the Guard was made
	names map[string]bool // the names it may be run by
	rule  string          // the name its argument rule is found by
}

// programs are the allowlist, by content hash, and a cache of the
// identities of the files requests name without one.
type programs struct {
	bySHA map[string]*program
	mu    sync.Mutex
	seen  map[string]seen // a program's path -> its identity, while its stat holds
}

type seen struct {
	stat stamp
	id   protocol.FileID
	real string
}

// stamp is what a file's inode says of its content: any write changes
// its ctime, which no user can set back.
type stamp struct {
	dev, ino, size uint64
	mtime, ctime   int64
	mtimeN, ctimeN int64
	cacheable      bool // the system gives a ctime
}

// allow resolves the allowlist's names on path.
func allow(names []string, path string) (*programs, error) {
	ps := &programs{bySHA: map[string]*program{}, seen: map[string]seen{}}
	for _, name := range names {
		file := name
		if filepath.Base(name) == name {
			var err error
			if file, err = lookPath(name, path); err != nil {
				return nil, fmt.Errorf("guard: Policy.Allow %q: %w", name, err)
			}
		} else if !filepath.IsAbs(name) {
			return nil, fmt.Errorf("guard: Policy.Allow %q: a path must be absolute", name)
		}
		real, id, err := identify(file)
		if err != nil {
			return nil, fmt.Errorf("guard: Policy.Allow %q: %w", name, err)
		}
		p := ps.bySHA[id.SHA256]
		if p == nil {
			p = &program{path: real, id: id, names: map[string]bool{}, rule: filepath.Base(name)}
			ps.bySHA[id.SHA256] = p
		}
		p.names[filepath.Base(name)] = true
		p.names[filepath.Base(real)] = true
	}
	return ps, nil
}

// named reports whether a program is allowed by that name.
func (ps *programs) named(name string) bool {
	for _, p := range ps.bySHA {
		if p.names[name] {
			return true
		}
	}
	return false
}

// lookPath finds name in the absolute folders of path, as execvp does.
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// identify returns a file's real path and identity.
func identify(file string) (string, protocol.FileID, error) {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	f, err := openProgram(real)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	defer f.Close()
	st, err := stampOf(f)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", protocol.FileID{}, err
	}
	return real, protocol.FileID{Dev: st.dev, Ino: st.ino, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// maxProgram bounds the size of a file the guard hashes: a larger one
// is refused rather than read for seconds.
const maxProgram = 512 << 20

// openProgram opens a file to hash it without blocking (a FIFO's open
// waits for a writer) and refuses what is not a regular file of at most
// maxProgram bytes (a pipe named by /proc/self/fd would be read).
func openProgram(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || fi.Size() > maxProgram) {
		err = fmt.Errorf("%s is not a regular file of at most %d bytes", path, maxProgram)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func stampOf(f *os.File) (stamp, error) {
	fi, err := f.Stat()
	if err != nil {
		return stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return stamp{}, errors.New("not a regular file")
	}
	return stampOfInfo(fi)
}

// identity returns the real path and identity of the file a request
// names with none (a gate that shows no program_id): hashed once, again
// only when the file the name reaches has another inode, or its inode
// says it changed (one stat, links followed, per request).
func (ps *programs) identity(file string) (string, protocol.FileID, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	now, err := stampOfInfo(fi)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	ps.mu.Lock()
	s, ok := ps.seen[file]
	ps.mu.Unlock()
	if ok && s.stat == now && now.cacheable {
		return s.real, s.id, nil
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	f, err := openProgram(real)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	defer f.Close()
	opened, err := stampOf(f)
	if err != nil {
		return "", protocol.FileID{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", protocol.FileID{}, err
	}
	id := protocol.FileID{Dev: opened.dev, Ino: opened.ino, SHA256: hex.EncodeToString(h.Sum(nil))}
	if after, err := stampOf(f); err == nil && after == opened && opened.cacheable {
		ps.mu.Lock()
		if len(ps.seen) > 4096 {
			clear(ps.seen)
		}
		ps.seen[file] = seen{stat: opened, id: id, real: real}
		ps.mu.Unlock()
	}
	return real, id, nil
}

// match returns the allowed program whose identity is id, or nil.
func (ps *programs) match(id protocol.FileID) *program {
	p := ps.bySHA[id.SHA256]
	if p == nil {
		return nil
	}
	if (id.Dev != 0 || id.Ino != 0) && (id.Dev != p.id.Dev || id.Ino != p.id.Ino) {
		return nil // the same bytes elsewhere: a program may read files beside it
	}
	return p
}

// short is a hash as messages show it.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "…"
	}
	return sha
}
