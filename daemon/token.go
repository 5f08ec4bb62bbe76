package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"shinken.dev/go/internal/tokenfile"
)

// tokenPoll is how often the token file is read for a change. A read of a
// few bytes a second costs nothing, and works where change notifications do
// not (Kubernetes swaps a mounted Secret through a symlink).
const tokenPoll = time.Second

// TokenQuiet is how long a token file with no final newline must stay
// unchanged before it is adopted (a half-written token never opens a
// session); client.ReadTokenFile reads a token file by the same rule.
const TokenQuiet = tokenfile.Quiet

// errTokenIncomplete is a token file that may still be being written.
var errTokenIncomplete = tokenfile.ErrIncomplete

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
	t, err := tokenfile.Read(ts.path, told, ts.now())
	if err != nil && !errors.Is(err, errTokenIncomplete) && !errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("daemon: %w", err)
	}
	return t, err
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
