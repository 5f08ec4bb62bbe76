package atspi

import (
	"context"
	"errors"
	"fmt"

	"shinken.dev/go/shinken/aci"
)

// ErrBusLost is wrapped by [Client.Ping] when the Client's connection to
// the accessibility bus is gone (the bus exited): a new Client, from
// [Connect], is the way back.
var ErrBusLost = errors.New("atspi: connection to the accessibility bus lost")

// Ping asks the registry on the Client's accessibility bus to answer
// (org.freedesktop.DBus.Peer.Ping, which the bus starts the registry for
// if it is not running): one round trip that proves the bus and its
// registry are up, for a readiness probe. The error wraps
// [aci.ErrA11yUnavailable], and also [ErrBusLost] when the connection to
// the bus is gone: that Client will not answer again.
func (c *Client) Ping(ctx context.Context) error {
	if c.closed() {
		return errClientClosed
	}
	err := c.bus.Object(registryName, pathRoot).CallWithContext(ctx, "org.freedesktop.DBus.Peer.Ping", 0).Err
	if err == nil {
		return nil
	}
	if !c.bus.Connected() {
		return fmt.Errorf("%w: %w: accessibility bus %s: %v", aci.ErrA11yUnavailable, ErrBusLost, c.busAddr, err)
	}
	return fmt.Errorf("%w: accessibility bus %s: the registry does not answer: %v", aci.ErrA11yUnavailable, c.busAddr, err)
}
