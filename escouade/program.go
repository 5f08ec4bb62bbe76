package escouade

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"

	"shinken.dev/go/escouade/protocol"
)

// A heldProgram is a command plugin's program, opened at its first start
// and held for the plugin's life. On Linux every start runs that file,
// through /proc/self/fd (the program gets it as its descriptor 3, which a
// script's interpreter reads it from), whatever was renamed over its path
// meanwhile: an agent allowed cp and mv in the plugin's folder cannot have
// its own program restarted in the plugin's place. Elsewhere the path is
// run, and a restart is refused when it names another file than the first
// start's. Everywhere a restart is refused, and the plugin disabled, when
// the file's contents changed (written in place): its identity (device,
// inode, SHA-256), taken at the first start, says so.
type heldProgram struct {
	mu sync.Mutex
	f  *os.File
	id protocol.FileID
}

// open returns the program's file, opened from path at the first call and
// checked against its first identity at each later one; moved says that
// path names another file now (on Linux the held one runs regardless).
func (hp *heldProgram) open(path string) (f *os.File, moved bool, err error) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	if hp.f == nil {
		f, err := os.Open(path)
		if err != nil {
			return nil, false, err
		}
		id, err := identify(f)
		if err != nil {
			f.Close()
			return nil, false, err
		}
		hp.f, hp.id = f, id
		return f, false, nil
	}
	id, err := identify(hp.f)
	if err != nil {
		return nil, false, err
	}
	if id.SHA256 != hp.id.SHA256 {
		return nil, false, fmt.Errorf("%w: %s was written in place (SHA-256 %s, first %s)", ErrProgramChanged, path, id.SHA256, hp.id.SHA256)
	}
	moved = true
	if fi, err := os.Stat(path); err == nil {
		dev, ino := devIno(fi)
		moved = dev != hp.id.Dev || ino != hp.id.Ino
	}
	if moved && !execHeld {
		return nil, true, fmt.Errorf("%w: %s names another file than at the first start", ErrProgramChanged, path)
	}
	return hp.f, moved, nil
}

// identity returns the held file's identity; the zero FileID before the
// first start.
func (hp *heldProgram) identity() protocol.FileID {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	return hp.id
}

// close lets go of the file, with the plugin.
func (hp *heldProgram) close() {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	if hp.f != nil {
		hp.f.Close()
	}
}

// identify reads f's identity: its device, inode and SHA-256.
func identify(f *os.File) (protocol.FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return protocol.FileID{}, err
	}
	if !fi.Mode().IsRegular() {
		return protocol.FileID{}, fmt.Errorf("%s is not a regular file", f.Name())
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return protocol.FileID{}, err
	}
	dev, ino := devIno(fi)
	return protocol.FileID{Dev: dev, Ino: ino, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
