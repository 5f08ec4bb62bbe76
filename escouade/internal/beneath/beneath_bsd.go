//go:build unix && !linux

package beneath

import (
	"errors"
	"os"
)

var errNoOpenat2 = errors.New("no openat2")

// openat2Beneath: only Linux has openat2; the walk does its work.
func openat2Beneath(int, string, int, uint32) (int, error) { return -1, errNoOpenat2 }

// fdPath: the path of a descriptor is not asked for here; checkOpenedAt
// compares the file opened with the one its path names.
func fdPath(*os.File) (string, bool) { return "", false }

// OpenForStat opens a file to stat it.
const OpenForStat = os.O_RDONLY
