package client

import (
	"time"

	"shinken.dev/go/internal/tokenfile"
)

// ReadTokenFile reads a daemon's token file as the daemon does: its
// content with surrounding white space trimmed, refused while empty, or
// while it may be half-written (no final newline, and changed less than
// two seconds ago; see daemon.TokenQuiet). Pass the token to Dial in
// Options.Token.
func ReadTokenFile(path string) (string, error) {
	return tokenfile.Read(path, false, time.Now())
}
