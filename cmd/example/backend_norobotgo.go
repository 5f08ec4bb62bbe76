//go:build !robotgo

package main

import (
	"context"
	"errors"

	"shinken.dev/go/shinken"
)

// openRobotgo explains the build tag: the robotgo backend uses cgo, and the
// default build is pure Go.
func openRobotgo(context.Context) (shinken.Backend, func(), error) {
	return nil, nil, errors.New("-backend robotgo needs a build with cgo and the robotgo tag: go run -tags robotgo ./cmd/example -backend robotgo (on Debian, install libx11-dev and libxtst-dev first)")
}
