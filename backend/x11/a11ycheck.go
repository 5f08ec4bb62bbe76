package x11

import (
	"context"
	"errors"
	"time"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/shinken/aci"
)

// CheckAccessibility says whether the accessibility tree can be read, for a
// readiness probe. It looks for the bus as a first use would; while no bus
// was ever found, accessibility is off and it returns nil. Once one was,
// its registry must answer a round trip ([atspi.Client.Ping]): until it
// does, the error wraps [aci.ErrA11yUnavailable] and says why.
func (a *Accessible) CheckAccessibility(ctx context.Context) error {
	c, err := a.client(ctx)
	if err != nil {
		a.mu.Lock()
		on := a.a11yOn
		a.mu.Unlock()
		if errors.Is(err, aci.ErrClosed) || on {
			return err
		}
		return nil
	}
	a.mu.Lock()
	a.a11yOn = true
	a.mu.Unlock()
	err = c.Ping(ctx)
	if errors.Is(err, atspi.ErrBusLost) {
		// Forget the dead connection, so that the next use finds the bus
		// again; and say why until then.
		a.mu.Lock()
		if a.c == c {
			a.c, a.err, a.tried = nil, err, time.Now()
		}
		a.mu.Unlock()
		c.Close()
	}
	return err
}
