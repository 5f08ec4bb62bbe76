package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"shinken.dev/go/escouade/protocol"
)

// fileRequest judges a read or an edit (input.path, and input.to for a
// move) by the Policy's roots.
func (g *Guard) fileRequest(r protocol.PermissionRequest) (protocol.Verdict, string) {
	var paths []string
	for _, key := range []string{"path", "to"} {
		v, ok := r.Input[key]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok || s == "" {
			return protocol.Deny, fmt.Sprintf("input.%s is not a path", key)
		}
		paths = append(paths, s)
	}
	if len(paths) == 0 {
		return protocol.Deny, "a " + r.Kind + " of no path"
	}
	for _, p := range paths {
		var v protocol.Verdict
		var why string
		if r.Kind == protocol.KindRead {
			v, why = g.read(p)
		} else {
			v, why = g.edit(p)
		}
		if v != protocol.Allow {
			return v, p + ": " + why
		}
	}
	return protocol.Allow, ""
}

// read allows a path under a Read or a Write root.
func (g *Guard) read(p string) (protocol.Verdict, string) {
	real, err := realPath(p, true)
	if err != nil {
		return protocol.Deny, err.Error()
	}
	if under(real, g.readRoots) || under(real, g.writeRoots) {
		return protocol.Allow, ""
	}
	return protocol.Deny, fmt.Sprintf("%s is in no folder the guard lets the agent read", real)
}

// edit allows a path under a Write root, not a root itself, and not
// protected. Both the file the path reaches (links followed) and the
// path itself (its folder's links followed: what a move or a delete
// changes) are judged.
func (g *Guard) edit(p string) (protocol.Verdict, string) {
	for _, follow := range []bool{true, false} {
		real, err := realPath(p, follow)
		if err != nil {
			return protocol.Deny, err.Error()
		}
		if !under(real, g.writeRoots) {
			return protocol.Deny, fmt.Sprintf("%s is in no folder the guard lets the agent change", real)
		}
		for _, root := range g.writeRoots {
			if real == root {
				return protocol.Deny, fmt.Sprintf("%s is a root of the guard's own", real)
			}
		}
		for _, pat := range g.protected {
			if ok, _ := matchRun(pat, strings.Split(strings.TrimPrefix(real, "/"), "/")); ok {
				return protocol.Deny, fmt.Sprintf("%s is protected (%s): a program runs it, or reads it to know what to run", real, pat)
			}
		}
	}
	return protocol.Allow, ""
}

// realPath returns an absolute path's real path, as the kernel walks
// it: each link followed where it stands (the last one only when
// follow), so that a .. after a link leaves the link's target, not the
// link's folder; a tail that does not exist yet is taken as the folders
// it will be made of.
func realPath(p string, follow bool) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	hops := 0
	return walk("/", p, follow, &hops)
}

// walk resolves p from the real folder cur.
func walk(cur, p string, follow bool, hops *int) (string, error) {
	if filepath.IsAbs(p) {
		cur = "/"
	}
	parts := strings.Split(p, "/")
	last := len(parts) - 1
	for last > 0 && (parts[last] == "" || parts[last] == ".") {
		last--
	}
	for i, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			cur = next
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink != 0 && (i < last || follow):
			if *hops++; *hops > 255 {
				return "", fmt.Errorf("%s: too many links", p)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			if cur, err = walk(cur, target, true, hops); err != nil {
				return "", err
			}
		default:
			cur = next
		}
	}
	return cur, nil
}

// under reports whether p is one of roots or inside one.
func under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// matchRun reports whether a pattern's components match a run of
// consecutive components of parts.
func matchRun(pattern string, parts []string) (bool, error) {
	pat := strings.Split(strings.Trim(pattern, "/"), "/")
	for start := 0; start+len(pat) <= len(parts); start++ {
		all := true
		for i, pp := range pat {
			ok, err := path.Match(pp, parts[start+i])
			if err != nil {
				return false, err
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return true, nil
		}
	}
	return false, nil
}
