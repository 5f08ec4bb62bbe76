// Package tokenfile reads a token file the one way the daemon and its
// clients agree on: its content with surrounding white space trimmed,
// refused while empty or possibly half-written.
package tokenfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Quiet is how long a token file with no final newline must have gone
// unchanged before it is taken: a file rewritten in place (truncated, then
// written) may be read half-written, and a half token must never open a
// session. A file ending with a newline is complete at once; one renamed
// into place is never seen half-written.
const Quiet = 2 * time.Second

// MaxBytes bounds a token file.
const MaxBytes = 64 << 10

// ErrIncomplete is a token file that may still be being written.
var ErrIncomplete = errors.New("the token file may be half-written (no final newline, changed less than 2s ago): waiting for it to be complete")

// Read reads the token file at path. told says the file is complete
// whatever its age (a SIGHUP says so); now is the time its age is read
// against.
func Read(path string, told bool, now time.Time) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	// The modification time is read before the content: a write after it
	// makes the file look newer next time, never older.
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err == nil && len(b) > MaxBytes {
		err = fmt.Errorf("longer than %d bytes", MaxBytes)
	}
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	complete := told || bytes.HasSuffix(b, []byte("\n")) || now.Sub(st.ModTime()) >= Quiet
	t := string(bytes.TrimSpace(b))
	switch {
	case !complete:
		return "", ErrIncomplete
	case t == "":
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return t, nil
}
