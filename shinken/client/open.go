package client

import (
	"context"
	"errors"
	"fmt"

	"shinken.dev/go/shinken/aci"
)

// opener is the program that opens a file or a URL with its default
// application on each platform, run by Open with the target as its one
// argument.
var opener = map[aci.Platform]string{
	aci.PlatformLinux: "xdg-open",
	aci.PlatformMacOS: "open",
}

// Open opens a file path or a URL on the runtime's machine with its
// default application, as a double click in a file manager or a link
// would: through launch_app (so the runtime's Authorizer judges it as
// one) with the platform's opener, xdg-open on Linux and open on macOS.
// A platform without one is an error wrapping aci.ErrUnsupported.
func (c *Client) Open(ctx context.Context, target string) error {
	if target == "" {
		return aci.Errorf(aci.CodeInvalidAction, "open needs a file or a URL")
	}
	p, err := c.Platform(ctx)
	if err != nil {
		return err
	}
	prog, ok := opener[p]
	if !ok {
		return fmt.Errorf("client: no default-application opener on %s: %w", p, errors.ErrUnsupported)
	}
	return c.LaunchApp(ctx, prog, target)
}
