//go:build !linux

package gate

import "path/filepath"

// pathMemo is what one request read of the PATH: off Linux, nothing.
type pathMemo struct{}

// programAt is identify: off Linux nothing is cached.
func programAt(path string) (prog, bool) { return identify(path) }

// inDir returns the program name is in the folder dir, or false when it
// holds none.
func (r *reader) inDir(dir, name string) (prog, bool) { return identify(filepath.Join(dir, name)) }
