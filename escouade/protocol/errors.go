package protocol

import (
	"errors"
	"fmt"

	"shinken.dev/go/escouade/internal/fields"
)

// A Code is an error code of the protocol (its x-errors).
type Code int64

// The protocol's error codes, as the schema's x-errors names them.
const (
	CodeParse          Code = -32700 // parse: a line that is not JSON
	CodeInvalidRequest Code = -32600 // invalidRequest: a message that is not JSON-RPC 2.0
	CodeMethodNotFound Code = -32601 // methodNotFound: a method the other side does not serve
	CodeInvalidParams  Code = -32602 // invalidParams: parameters that do not hold
	CodeInternal       Code = -32603 // internal: the handler failed
	CodeNotYours       Code = -32001 // notYours: a secret that is not one of the plugin's own
	CodeKeychain       Code = -32002 // keychain: the system's keychain cannot be reached
	CodeRefused        Code = -32003 // refused: what the plugin may not reach
	CodeFailed         Code = -32004 // failed: no answer in time, too big, not UTF-8
	CodeNotFound       Code = -32005 // notFound: no such file
)

var codeNames = map[Code]string{
	CodeParse:          "parse",
	CodeInvalidRequest: "invalidRequest",
	CodeMethodNotFound: "methodNotFound",
	CodeInvalidParams:  "invalidParams",
	CodeInternal:       "internal",
	CodeNotYours:       "notYours",
	CodeKeychain:       "keychain",
	CodeRefused:        "refused",
	CodeFailed:         "failed",
	CodeNotFound:       "notFound",
}

// String returns the code's name in the schema: "refused", "notYours".
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Code(%d)", int64(c))
}

// An Error is an error answer: a code to act on, a message for people.
type Error struct {
	Code    Code
	Message string
}

// Error returns the message with the code's name.
func (e *Error) Error() string {
	return fmt.Sprintf("escouade: %s (%s)", e.Message, e.Code)
}

// Is matches an *Error by its code alone: errors.Is(err, ErrRefused).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for the protocol's error codes, to use with errors.Is.
var (
	ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams  = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal       = &Error{Code: CodeInternal, Message: "internal error"}
	ErrNotYours       = &Error{Code: CodeNotYours, Message: "not yours"}
	ErrKeychain       = &Error{Code: CodeKeychain, Message: "keychain unreachable"}
	ErrRefused        = &Error{Code: CodeRefused, Message: "refused"}
	ErrFailed         = &Error{Code: CodeFailed, Message: "failed"}
	ErrNotFound       = &Error{Code: CodeNotFound, Message: "not found"}
)

// ErrClosed is a closed side's error: a connection, a Host, a stopped Plugin.
var ErrClosed = errors.New("escouade: closed")

// ErrUnknownField marks a FieldError for a field the manifest does not know.
var ErrUnknownField = fields.ErrUnknownField

// A FieldError names, by its path ("request.kind", "run.command[0]"), the
// field of a message or a manifest that is wrong, and says why.
type FieldError = fields.FieldError
