//go:build !unix

package guard

import (
	"errors"
	"io/fs"
)

// stampOfInfo: this system gives no device and inode, so a program has no
// identity the guard can pin, and none is allowed.
func stampOfInfo(fs.FileInfo) (stamp, error) {
	return stamp{}, errors.New("no device and inode on this system")
}
