package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// tokenPoll is how often the token file is read for a change. A read of a
// few bytes a second costs nothing, and works where change notifications do
// not (Kubernetes swaps a mounted Secret through a symlink).
const tokenPoll = time.Second

// TokenQuiet is how long a token file with no final newline must have
// gone unchanged before it is adopted: a file rewritten in place
// (truncated, then written) may be read half-written, and a half token
// must never open a session. A file ending with a newline is complete at
// once; one renamed into place is never seen half-written.
const TokenQuiet = 2 * time.Second

// errTokenIncomplete is a token file that may still be being written.
var errTokenIncomplete = errors.New("daemon: the token file may be half-written (no final newline, changed less than TokenQuiet ago): waiting for it to be complete")

// tokenSource is the daemon's token: static, or a file followed.
type tokenSource struct {
	path string
	tok  string
	now  func() time.Time
}

// newTokenSource returns the token to start with: the file's, else token
// (none while the file does not exist or is incomplete, without token),
// else a random one.
func newTokenSource(token, path string) (*tokenSource, error) {
	ts := &tokenSource{path: path, now: time.Now, tok: token}
	switch {
	case path != "":
		t, err := ts.read(false)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errTokenIncomplete) {
			return nil, err
		}
		if t != "" {
			ts.tok = t
		}
	case token == "":
		ts.tok = RandomToken()
	}
	return ts, nil
}

func (ts *tokenSource) current() string { return ts.tok }

// ReadTokenFile reads a token file as a daemon does: its content with
// surrounding white space trimmed, refused while empty or possibly
// half-written (see TokenQuiet). A client of a daemon reads its token so.
func ReadTokenFile(path string) (string, error) {
	return (&tokenSource{path: path, now: time.Now}).read(false)
}

// RandomToken returns a new token of 128 random bits, in hex.
func RandomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// read reads the token file: its content with surrounding white space
// trimmed, which must not be empty, and must be complete (see TokenQuiet)
// unless told it is (SIGHUP).
func (ts *tokenSource) read(told bool) (string, error) {
	f, err := os.Open(ts.path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	b, err := readAtMost(f, 64<<10)
	if err != nil {
		return "", fmt.Errorf("daemon: token file %s: %w", ts.path, err)
	}
	// The modification time is read before the content: a write after it
	// makes the file look newer next time, never older.
	complete := told || bytes.HasSuffix(b, []byte("\n")) || ts.now().Sub(st.ModTime()) >= TokenQuiet
	t := string(bytes.TrimSpace(b))
	switch {
	case t == "" && !complete:
		return "", errTokenIncomplete
	case t == "":
		return "", fmt.Errorf("daemon: token file %s is empty", ts.path)
	case !complete:
		return "", errTokenIncomplete
	}
	return t, nil
}

// readAtMost reads r whole, refusing more than n bytes.
func readAtMost(r io.Reader, n int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, n+1))
	if err == nil && int64(len(b)) > n {
		err = fmt.Errorf("longer than %d bytes", n)
	}
	return b, err
}

// watch re-reads the token file every tokenPoll and on SIGHUP until ctx
// ends, and calls set with a token that changed. A file that cannot be
// read, or may be half-written, keeps the token in force (logged once per
// failure).
func (ts *tokenSource) watch(ctx context.Context, set func(string), log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(tokenPoll)
	defer tick.Stop()
	var lastErr string
	for {
		told := false
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info("SIGHUP: reading the token file", "file", ts.path)
			told = true
		case <-tick.C:
		}
		t, err := ts.read(told)
		if err != nil {
			if err.Error() != lastErr {
				log.Warn("token file not adopted: the token in force stays", "file", ts.path, "err", err)
				lastErr = err.Error()
			}
			continue
		}
		lastErr = ""
		if t == ts.tok {
			continue
		}
		ts.tok = t
		set(t)
		log.Info("token changed: sessions opened with the old token are closed", "file", ts.path)
	}
}
