//go:build !unix

package beneath

import (
	"os"
	"path/filepath"
	"strings"
)

// openNoLinks opens through os.Root, which keeps to dir whatever links
// say; the folders on the way are looked at for a manifest by name.
func openNoLinks(dir, rel string, flag int, perm os.FileMode, o Options) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if o.NoPluginFolder {
		cur := "."
		for _, part := range append([]string{"."}, strings.Split(rel, "/")...) {
			cur = filepath.Join(cur, part)
			if _, err := root.Lstat(filepath.Join(cur, manifestName)); err == nil {
				return nil, ErrPluginFolder
			}
		}
	}
	if d := filepath.Dir(filepath.FromSlash(rel)); o.MkDirs && d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return root.OpenFile(filepath.FromSlash(rel), flag, perm)
}

// checkOpenedAt checks that f is the file at want.
func checkOpenedAt(f *os.File, want string) error {
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

func LinkCount(os.FileInfo) uint64 { return 1 }

// OpenForStat opens a file to stat it.
const OpenForStat = os.O_RDONLY

// IdentityOf returns a file's device and inode numbers: none here.
func IdentityOf(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
