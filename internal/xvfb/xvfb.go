// Package xvfb starts a private X session for tests and demos: an Xvfb
// server on a free display number, optionally the openbox window manager and
// a session D-Bus, and takes every process of the session down again on
// Close, including the ones those processes started.
//
// It is the test-shaped face of package backend/x11/session: no
// accessibility bus unless asked, and no restarts unless asked, so a part
// that dies stays dead where a test can see it. It knows nothing of the testing
// package; xvfbtest wraps it for tests.
//
// It is one of the two test rigs that reach above internal on purpose: a
// test session and the daemon's session must start, watch and end X the
// same way, so this package drives backend/x11/session rather than keep a
// second copy of it.
package xvfb

import (
	"context"
	"log/slog"
	"time"

	"shinken.dev/go/backend/x11/session"
)

// ErrNotInstalled is wrapped by Start when a program the session needs is
// not on PATH. The error text names the program.
var ErrNotInstalled = session.ErrNotInstalled

// MarkerVar is the environment variable that tags every process of a
// session. Close kills whatever still carries the session's value, which is
// how processes started by the session's processes (D-Bus activation,
// applications launched from a test) are found once their parent is gone.
const MarkerVar = session.MarkerVar

// Options configure a session. A nil *Options means the defaults.
type Options struct {
	Width, Height int           // screen size in pixels; 0 means 1280×800
	Depth         int           // screen depth; 0 means 24
	NoWM          bool          // true runs no window manager; default starts openbox
	SessionBus    bool          // true starts a session dbus-daemon; default none
	Accessibility bool          // true starts the AT-SPI bus too (and the session bus); default none
	Restart       bool          // true restarts a part that dies, as a daemon's session does; default a dead part stays dead
	Timeout       time.Duration // how long each program may take to get ready; 0 means 15 s
}

// A Server is a running session. Its fields (Display, Xauthority, Cookie,
// SessionBus, Marker) and methods (Env, Command, Processes, Close) are the
// session's.
type Server struct {
	*session.Session
}

// Start starts a session. On error nothing is left running.
func Start(ctx context.Context, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	restarts := -1
	if o.Restart {
		restarts = 0 // the session's default budget
	}
	s, err := session.Start(ctx, &session.Options{
		Width: o.Width, Height: o.Height, Depth: o.Depth, Timeout: o.Timeout,
		NoWindowManager: o.NoWM, NoSessionBus: !o.SessionBus && !o.Accessibility, NoAccessibility: !o.Accessibility,
		MaxRestarts: restarts, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	return &Server{s}, nil
}
