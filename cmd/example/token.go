package main

import (
	"bytes"
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
)

// tokenPoll is how often the token file is read for a change. A read of a
// few bytes a second costs nothing, and works where change notifications do
// not (Kubernetes swaps a mounted Secret through a symlink).
const tokenPoll = time.Second

// initialToken returns the token to start with and whether it comes from
// -token-file: -token, then -token-file, then $SHINKEN_TOKEN, else a
// random one. A token file that does not exist yet is an empty token
// (every TCP hello refused) until it appears: that is how a warm sandbox
// waits for its claim.
func initialToken(cfg config) (string, error) {
	if cfg.token != "" && cfg.tokenFile != "" {
		return "", errors.New("-token and -token-file exclude each other")
	}
	if cfg.token != "" {
		return cfg.token, nil
	}
	if cfg.tokenFile != "" {
		t, err := readToken(cfg.tokenFile)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return t, err
	}
	if t := os.Getenv("SHINKEN_TOKEN"); t != "" {
		return t, nil
	}
	return randomToken(), nil
}

// randomToken returns a new token of 128 random bits.
func randomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// readToken reads a token file: its content with surrounding white space
// trimmed, which must not be empty.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	t := string(bytes.TrimSpace(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return t, nil
}

// watchToken re-reads the token file every tokenPoll and on SIGHUP until
// ctx ends, and calls set with a token that changed. A file that cannot be
// read keeps the token in force (logged once per failure).
func watchToken(ctx context.Context, path, current string, set func(string), log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(tokenPoll)
	defer tick.Stop()
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info("SIGHUP: reading the token file", "file", path)
		case <-tick.C:
		}
		t, err := readToken(path)
		if err != nil {
			if err.Error() != lastErr {
				log.Warn("token file unreadable: the token in force stays", "file", path, "err", err)
				lastErr = err.Error()
			}
			continue
		}
		lastErr = ""
		if t == current {
			continue
		}
		current = t
		set(t)
		log.Info("token changed: sessions opened with the old token are closed", "file", path)
	}
}
