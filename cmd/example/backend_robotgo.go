//go:build robotgo

package main

import (
	"context"

	"shinken.dev/go/backend/robotgo"
	"shinken.dev/go/shinken"
)

// openRobotgo opens the robotgo backend on this process's desktop ($DISPLAY
// on X11), with the clipboard when robotgo's works here. It offers no
// accessibility tree, window list or launcher, so the welcome advertises
// screenshots, input and the clipboard.
func openRobotgo(ctx context.Context) (shinken.Backend, func(), error) {
	b, err := robotgo.Open(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	return b.Desktop(), func() { b.Close() }, nil
}
