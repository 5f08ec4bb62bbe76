//go:build !unix

package escouade

import "os"

// devIno returns a file's device and inode numbers: none here.
func devIno(os.FileInfo) (dev, ino uint64) { return 0, 0 }
