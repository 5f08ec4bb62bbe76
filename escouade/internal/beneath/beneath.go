// Package beneath opens files under a folder the way the plugin host must:
// every file the Host opens for a plugin (files/read, fs/*, the code that
// Start reads) is opened here: under a folder already judged, by a path
// relative to it that was judged, with no link followed on the way (the
// path was resolved when it was judged; a link that appears since is
// refused, not followed), non-blocking (a FIFO does not hold open(2)),
// and the descriptor is then checked to be where the path said. What is
// read or written is what was judged, whatever another process swaps in
// meanwhile.
//
// On Linux the open is one openat2(2) with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS where the kernel has it (5.6 and later), else a
// walk of openat(2) with O_NOFOLLOW from the folder, one part at a time;
// the descriptor's path is read back from /proc/self/fd. On other Unix
// systems it is the walk, and the check is that the path names the file
// opened. Elsewhere it is os.Root, and the same check.
package beneath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Options say what else an open under a folder does.
type Options struct {
	// MkDirs makes the folders missing on the way (fs/write).
	MkDirs bool
	// NoPluginFolder refuses a path through a plugin's folder: a folder
	// holding a plugin.json, the root's own included, or the folder of a
	// loaded plugin (in NotIn).
	NoPluginFolder bool
	NotIn          []string // real paths of folders nothing is opened in
	// Avoid holds the identities of folders nothing is opened in or
	// through, whatever they are named when the open walks: the open is
	// then a walk from the root down, one descriptor held per folder,
	// each checked by its identity (Unix). With AvoidHidden, each folder
	// walked adds to Avoid the identities of its hidden entries (.ssh,
	// .git), so that a folder exchanged with one is known for what it is.
	Avoid       *Set
	AvoidHidden bool
	// AvoidKeys are more identities of folders nothing is opened in or
	// through (a private project's the plugin is not on for, now).
	AvoidKeys []Key
}

// Why an open under a folder is refused.
// manifestName is the name of a plugin's manifest, which marks its folder.
const manifestName = "plugin.json"

var (
	ErrLinkOnTheWay = errors.New("a link on the way: links are followed only when the path is judged")
	ErrPluginFolder = errors.New("a plugin's folder: its manifest and its code are no root's")
	ErrMoved        = errors.New("the path changed while it was opened")
	ErrNotBeneath   = errors.New("the path leaves its root")
	ErrNotRegular   = errors.New("not a regular file")
	ErrHardLinked   = errors.New("a file with more than one name (a hard link)")
	ErrBadRelative  = errors.New("not a clean relative path")
	ErrAvoided      = errors.New("a folder the rules refuse, whatever its name now (a private project's, a hidden one)")
)

// Open opens rel (slash-separated, clean, relative; "." for dir
// itself) under dir (a real path) with flag and perm, as the comment above
// says. The caller closes the file.
func Open(dir, rel string, flag int, perm os.FileMode, o Options) (*os.File, error) {
	rel = filepath.ToSlash(rel)
	if rel == "" || strings.HasPrefix(rel, "/") || filepath.ToSlash(filepath.Clean(rel)) != rel {
		return nil, ErrBadRelative
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return nil, ErrNotBeneath
		}
	}
	want := filepath.Join(dir, filepath.FromSlash(rel))
	for _, d := range o.NotIn {
		if Within(d, want) {
			return nil, ErrPluginFolder
		}
	}
	f, err := openNoLinks(dir, rel, flag, perm, o)
	if err != nil {
		return nil, err
	}
	// O_PATH|O_NOFOLLOW opens a link itself rather than failing.
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, ErrLinkOnTheWay
	}
	if err := checkOpenedAt(f, want); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenRegular opens rel under dir for reading, as a regular file with one
// name at most when oneName is set (a hard link in a plugin's folder may
// name any file of its owner: .env, a key).
func OpenRegular(dir, rel string, oneName bool) (*os.File, os.FileInfo, error) {
	f, err := Open(dir, rel, os.O_RDONLY, 0, Options{})
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, ErrNotRegular
	}
	if oneName && LinkCount(fi) > 1 {
		f.Close()
		return nil, fi, ErrHardLinked
	}
	return f, fi, nil
}

// OpenFileIn opens the regular file name of the folder dir (links of dir
// itself followed, none below it) for the Host's own reading: a manifest,
// a project's .escouade.yml. A FIFO put there holds nothing up.
func OpenFileIn(dir, name string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	f, _, err := OpenRegular(real, name, false)
	return f, err
}

// Within reports whether the clean path p is root or lies beneath it.
func Within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}
