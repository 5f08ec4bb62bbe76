package agentuser

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A Reach says how the agent's user can reach a file it must not touch.
type Reach struct {
	Path string // the file, or the folder above it, that is within reach
	Why  string // "owned by the agent", "writable by its group 1001", ...
}

func (r *Reach) Error() string { return r.Path + " " + r.Why }

// CanWrite reports how u can change what path holds: write it, replace
// it, or replace a folder above it. It looks at owner and mode bits only
// (no ACLs): u owns path or a folder above it (an owner can chmod), or
// one of them is writable by a group of u's or by others. A folder with
// the sticky bit (/tmp) does not let u replace an entry u does not own,
// so it counts only for the path itself. Both the path as given and its
// real path, links followed, are checked. nil means out of u's reach.
func (u *User) CanWrite(path string) (*Reach, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{abs, real} {
		for i, dir := 0, p; ; i++ {
			fi, err := os.Lstat(dir)
			if err != nil {
				return nil, err
			}
			if r := u.writable(dir, fi, i == 0); r != nil {
				return r, nil
			}
			up := filepath.Dir(dir)
			if up == dir {
				break
			}
			dir = up
		}
	}
	return nil, nil
}

// CanWriteTree is CanWrite of root and of everything beneath it; a link
// beneath it is checked where it leads too.
func (u *User) CanWriteTree(root string) (*Reach, error) {
	if r, err := u.CanWrite(root); r != nil || err != nil {
		return r, err
	}
	var found *Reach
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if found = u.writable(p, fi, true); found != nil {
			return filepath.SkipAll
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if found, err = u.CanWrite(p); found != nil || err != nil {
				return cmp.Or(err, filepath.SkipAll)
			}
		}
		return nil
	})
	return found, err
}

// CanRead reports how u can read path: it owns the file, or the file is
// readable by a group of u's or by others, and u can search every folder
// above it. nil means u cannot read it.
func (u *User) CanRead(path string) (*Reach, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	r := u.permits(real, fi, 4)
	if r == nil {
		return nil, nil
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		di, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		if u.permits(dir, di, 1) == nil {
			return nil, nil
		}
		if filepath.Dir(dir) == dir {
			return r, nil
		}
	}
}

// writable says how u can change dir's entry or content; self is the path
// checked itself rather than a folder above it.
func (u *User) writable(path string, fi fs.FileInfo, self bool) *Reach {
	uid, _, ok := owner(fi)
	if !ok {
		return nil
	}
	if uid == u.UID {
		return &Reach{Path: path, Why: fmt.Sprintf("is owned by the agent's user %s", u.Name)}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil // a link's own mode means nothing; its folder is checked
	}
	if !self && fi.Mode()&fs.ModeSticky != 0 {
		return nil
	}
	return u.permits(path, fi, 2)
}

// permits says how u is granted the access bit (4 read, 2 write, 1
// search) on path by its group or other bits, or by owning it.
func (u *User) permits(path string, fi fs.FileInfo, bit fs.FileMode) *Reach {
	uid, gid, ok := owner(fi)
	if !ok {
		return nil
	}
	what := map[fs.FileMode]string{4: "readable", 2: "writable", 1: "searchable"}[bit]
	mode := fi.Mode().Perm()
	switch {
	case uid == u.UID: // an owner can chmod
		return &Reach{Path: path, Why: fmt.Sprintf("is owned by the agent's user %s", u.Name)}
	case uid != u.UID && u.inGroup(gid) && mode&(bit<<3) != 0:
		return &Reach{Path: path, Why: fmt.Sprintf("is %s by its group %d, one of the agent's user %s", what, gid, u.Name)}
	case uid != u.UID && !u.inGroup(gid) && mode&bit != 0:
		return &Reach{Path: path, Why: fmt.Sprintf("is %s by every user (mode %04o)", what, mode)}
	}
	return nil
}
