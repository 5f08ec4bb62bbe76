//go:build !linux

package gate

import (
	"os"
	"path/filepath"
)

// identify returns the real file name names, or false when it is no
// executable regular file. Off Linux it finds no identity: a program is
// shown by its path alone, and a guard that allows by identity allows
// none.
func identify(name string) (prog, bool) {
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return prog{}, false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return prog{}, false
	}
	return prog{path: real, size: fi.Size()}, true
}
