package machine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken/aci"
)

// opener is the program that opens a file or a URL with its default
// application on each platform, run by Open with the target as its one
// argument.
var opener = map[aci.Platform]string{
	aci.PlatformLinux: "xdg-open",
	aci.PlatformMacOS: "open",
}

// ErrNoOpener is wrapped by Open's error when the runtime's machine has no
// opener (xdg-open on Linux, open on macOS); it wraps
// errors.ErrUnsupported in turn.
var ErrNoOpener = fmt.Errorf("machine: no default-application opener on the runtime's machine: %w", errors.ErrUnsupported)

// Open opens a file or a URL on the runtime's machine with its default
// application, as a double click or a link would, with the platform's
// opener: xdg-open on Linux, open on macOS. A target that is not a URL
// ("scheme:...") is a path, resolved as Tools.Abs does.
//
// One exec first checks what the opener would fail on at once: a missing
// opener is an error wrapping ErrNoOpener, a missing file a *fs.PathError
// wrapping fs.ErrNotExist. The Authorizer judges it as the opener's command
// line (dynamic: the opener runs the user's file associations). Then
// launch_app starts the opener, judged too, so that the application outlives
// the call; a failure after it started (no application for the type) is not
// seen.
func (m *Tools) Open(ctx context.Context, target string) error {
	if target == "" {
		return aci.Errorf(aci.CodeInvalidAction, "open needs a file or a URL")
	}
	p, err := m.c.Platform(ctx)
	if err != nil {
		return err
	}
	prog, ok := opener[p]
	if !ok {
		return fmt.Errorf("machine: no default-application opener on %s: %w", p, errors.ErrUnsupported)
	}
	if !hosttool.IsURL(target) {
		abs, err := m.Abs(ctx, target)
		if err != nil {
			return &fs.PathError{Op: "open", Path: target, Err: err}
		}
		target = abs
	}
	res, err := m.c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.Open.Argv(prog, target)})
	if err != nil {
		return err
	}
	msg := strings.TrimSpace(res.Stderr)
	switch {
	case res.ExitCode == nil:
		return fmt.Errorf("machine: checking %s before opening %s: killed (signal %d)", prog, target, deref(res.Signal))
	case *res.ExitCode == hosttool.ExitNoOpener:
		return fmt.Errorf("%w: %s", ErrNoOpener, msg)
	case *res.ExitCode == hosttool.ExitNotExist:
		return &fs.PathError{Op: "open", Path: target, Err: fmt.Errorf("%w: %s", fs.ErrNotExist, msg)}
	case *res.ExitCode != 0:
		return fmt.Errorf("machine: checking %s before opening %s: exit status %d: %s", prog, target, *res.ExitCode, msg)
	}
	return m.c.LaunchApp(ctx, prog, target)
}
