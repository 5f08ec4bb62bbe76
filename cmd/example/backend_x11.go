package main

import (
	"context"
	"fmt"

	"shinken.dev/go/backend/x11"
)

// openX11 opens the X server of $DISPLAY with the accessibility tree of its
// apps (over AT-SPI, found on first use). Its readiness check asks the
// accessibility bus to answer once one was found (see
// x11.Accessible.CheckAccessibility); on a display without one, capturing
// a frame is all there is to check.
func openX11(ctx context.Context) (desktop, error) {
	b, err := x11.Open(ctx, nil)
	if err != nil {
		return desktop{}, fmt.Errorf("-backend x11: %w", err)
	}
	d := b.WithAccessibility(nil)
	check := func(ctx context.Context) error {
		if err := d.CheckAccessibility(ctx); err != nil {
			return fmt.Errorf("the accessibility bus does not answer: %w", err)
		}
		return nil
	}
	return desktop{backend: d, check: check, close: func() { d.Close() }}, nil
}
