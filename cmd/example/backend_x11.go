package main

import (
	"context"
	"fmt"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/shinken"
)

// openX11 opens the X server of $DISPLAY with the accessibility tree of its
// apps (over AT-SPI, found on first use).
func openX11(ctx context.Context) (shinken.Backend, func(), error) {
	b, err := x11.Open(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("-backend x11: %w", err)
	}
	d := b.WithAccessibility(nil)
	return d, func() { d.Close() }, nil
}
