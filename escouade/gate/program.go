package gate

import (
	"os"
	"path/filepath"
	"strings"

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
