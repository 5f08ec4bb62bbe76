package main

import (
	"context"
	"fmt"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/shinken/daemon"
)

// openX11 opens the X server of $DISPLAY with the accessibility tree of its
// apps (over AT-SPI, found on first use). Its readiness check asks the
// accessibility bus to answer once one was found (see
// x11.Accessible.CheckAccessibility); on a display without one, capturing
// a frame is all there is to check.
func openX11(ctx context.Context) (daemon.Desktop, error) {
	b, err := x11.Open(ctx, nil)
	if err != nil {
		return daemon.Desktop{}, fmt.Errorf("-backend x11: %w", err)
	}
	d := b.WithAccessibility(nil)
	check := func(ctx context.Context) error {
		if err := d.CheckAccessibility(ctx); err != nil {
			return daemon.NotReady("the accessibility bus", "does not answer", err)
		}
		return nil
	}
	return daemon.Desktop{Backend: d, Check: check, Close: func() { d.Close() }}, nil
}
