package client

import (
	"time"

	"shinken.dev/go/internal/tokenfile"
)

// ReadTokenFile reads a daemon's token file as the daemon does: its content
// trimmed, refused while empty, or while it may be half-written (no final
// newline, changed under two seconds ago; see daemon.TokenQuiet). Give the
// token to Dial in DialOptions.Token.
func ReadTokenFile(path string) (string, error) {
	return tokenfile.Read(path, false, time.Now())
}
