package escouade

import (
	"errors"
	"fmt"

	"shinken.dev/go/escouade/protocol"
)

// The protocol's error codes and its Error type are those of package
// protocol, named here too so that the Host's callers need only this
// package.

// A Code is an error code of the protocol (its x-errors).
type Code = protocol.Code

// The protocol's error codes, as the schema's x-errors names them.
const (
	CodeParse          = protocol.CodeParse          // parse: a line that is not JSON
	CodeInvalidRequest = protocol.CodeInvalidRequest // invalidRequest: a message that is not JSON-RPC 2.0
	CodeMethodNotFound = protocol.CodeMethodNotFound // methodNotFound: a method the other side does not serve
	CodeInvalidParams  = protocol.CodeInvalidParams  // invalidParams: parameters that do not hold
	CodeInternal       = protocol.CodeInternal       // internal: the handler failed
	CodeNotYours       = protocol.CodeNotYours       // notYours: a secret that is not one of the plugin's own
	CodeKeychain       = protocol.CodeKeychain       // keychain: the system's keychain cannot be reached
	CodeRefused        = protocol.CodeRefused        // refused: what the plugin may not reach
	CodeFailed         = protocol.CodeFailed         // failed: no answer in time, too big, not UTF-8
	CodeNotFound       = protocol.CodeNotFound       // notFound: no such file
)

// An Error is an error answer of the protocol: one side refused or failed a
// request, with a code to act on and a message naming the rule, for people.
type Error = protocol.Error

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Sentinels for the protocol's error codes, to use with errors.Is.
var (
	ErrMethodNotFound = protocol.ErrMethodNotFound
	ErrInvalidParams  = protocol.ErrInvalidParams
	ErrInternal       = protocol.ErrInternal
	ErrNotYours       = protocol.ErrNotYours
	ErrKeychain       = protocol.ErrKeychain
	ErrRefused        = protocol.ErrRefused
	ErrFailed         = protocol.ErrFailed
	ErrNotFound       = protocol.ErrNotFound
)

// Errors of the Host's own API.
var (
	// ErrUnknownField is wrapped by the FieldError of a manifest field that
	// the manifest format does not have.
	ErrUnknownField = protocol.ErrUnknownField
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
	// protocol version other than ProtocolVersion.
	ErrProtocolVersion = errors.New("escouade: plugin speaks another protocol version")
	// ErrClosed is returned by a Host that was closed, and by a Plugin that
	// was stopped.
	ErrClosed = protocol.ErrClosed
	// ErrNotRunning is returned when a plugin is asked something while it is
	// not running (restarting, disabled).
	ErrNotRunning = errors.New("escouade: plugin not running")
)

// A FieldError names the field of a manifest, or of a message's params,
// that is wrong, by its path ("permissions.files.agentRepo",
// "run.command[0]"), and says why.
type FieldError = protocol.FieldError
