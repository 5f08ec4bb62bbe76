// Package xvfbtest gives a test its own X session (see package xvfb).
//
// Without Xvfb (or another program the session needs) on PATH the test is
// skipped with a message naming the program, except when the environment
// variable CI is "true": there a missing program is a failure, so a CI
// image that lost its X packages cannot pass by skipping.
package xvfbtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/xvfb"
)

// Start starts a session for t and stops it when t's cleanup runs, failing
// t if any process of the session survives. opts may be nil.
func Start(t testing.TB, opts *xvfb.Options) *xvfb.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := xvfb.Start(ctx, opts)
	if errors.Is(err, xvfb.ErrNotInstalled) {
		citest.Skip(t, "skipping X test: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if pids, err := s.Processes(); err != nil || len(pids) > 0 {
			t.Errorf("session processes left after Close: %v %v", pids, err)
		}
	})
	return s
}
