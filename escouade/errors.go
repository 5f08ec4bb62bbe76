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
	ErrNoProject       = errors.New("escouade: no such project")                         // a project id Projects does not know
	ErrNoAgent         = errors.New("escouade: no such agent")                           // an agent key Agents does not know
	ErrUnknownFact     = errors.New("escouade: unknown fact")                            // Fact of a name the protocol lacks
	ErrDuplicate       = errors.New("escouade: a plugin with this id is already loaded") // Start of a loaded id
	ErrProtocolVersion = errors.New("escouade: plugin speaks another protocol version")  // initialize answered with another version
	ErrNotRunning      = errors.New("escouade: plugin not running")                      // restarting, or disabled
	// ErrProgramChanged: a command plugin's program (the file its path
	// names) changed since its first start; no restart, it is disabled.
	ErrProgramChanged = errors.New("escouade: the plugin's program changed since its first start")
)
