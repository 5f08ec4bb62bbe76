package client_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"shinken.dev/go/internal/deptest"
	"shinken.dev/go/shinken/client"
)

// TestReadTokenFile: a client reads a daemon's token file by the daemon's
// rule, without linking the daemon: whole and trimmed once it ends with a
// newline, refused while it may be half-written, and refused empty.
func TestReadTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	os.WriteFile(path, []byte("  for-a-client\n"), 0o600)
	if got, err := client.ReadTokenFile(path); err != nil || got != "for-a-client" {
		t.Errorf("ReadTokenFile: %q %v", got, err)
	}
	os.WriteFile(path, []byte("for-a-cl"), 0o600)
	if got, err := client.ReadTokenFile(path); err == nil {
		t.Errorf("ReadTokenFile of a file just written without its newline: %q, want an error", got)
	}
	os.WriteFile(path, []byte(" \n"), 0o600)
	if got, err := client.ReadTokenFile(path); err == nil {
		t.Errorf("ReadTokenFile of an empty file: %q, want an error", got)
	}
	if _, err := client.ReadTokenFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadTokenFile of no file: %v, want ErrNotExist", err)
	}
}

// TestClientLinksNoDaemon: an agent that reads a token file links no
// server.
func TestClientLinksNoDaemon(t *testing.T) {
	deptest.Forbid(t, "shinken.dev/go/shinken/client", "shinken.dev/go/daemon", "shinken.dev/go/backend", "shinken.dev/go/escouade")
}
