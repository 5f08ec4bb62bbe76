package escouade

import (
	"errors"
	"fmt"

	"shinken.dev/go/escouade/protocol"
)

func errorf(code protocol.Code, format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Errors of the Host's own API.
var (
	// ErrNoProject is returned for a project id the Projects service does
	// not know.
	ErrNoProject = errors.New("escouade: no such project")
	// ErrNoAgent is returned for an agent key the Agents service does not
	// know.
	ErrNoAgent = errors.New("escouade: no such agent")
	// ErrUnknownFact is returned when publishing a fact the protocol does
	// not name.
	ErrUnknownFact = errors.New("escouade: unknown fact")
	// ErrDuplicate is returned when starting a plugin whose id is already
	// loaded.
	ErrDuplicate = errors.New("escouade: a plugin with this id is already loaded")
	// ErrProtocolVersion is returned when a plugin answers initialize with a
	// protocol version other than protocol.Version.
	ErrProtocolVersion = errors.New("escouade: plugin speaks another protocol version")
	// ErrNotRunning is returned when a plugin is asked something while it is
	// not running (restarting, disabled).
	ErrNotRunning = errors.New("escouade: plugin not running")
)
