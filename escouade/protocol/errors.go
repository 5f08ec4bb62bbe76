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

// An Error is an error answer of the protocol: one side refused or failed a
// request, with a code to act on and a message naming the rule, for people.
type Error struct {
	Code    Code
	Message string
}

// Error returns the message with the code's name.
func (e *Error) Error() string {
	return fmt.Sprintf("escouade: %s (%s)", e.Message, e.Code)
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, ErrRefused) holds for every refusal whatever its message.
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

// ErrClosed is returned by a side of the protocol that was closed: a
// plugin's connection to the Host, a Host, a Plugin that was stopped.
var ErrClosed = errors.New("escouade: closed")

// ErrUnknownField is wrapped by the FieldError of a field that a strict
// format (the manifest) does not have.
var ErrUnknownField = fields.ErrUnknownField

// A FieldError names the field of a message's params, or of a manifest,
// that is wrong, by its path ("request.kind", "run.command[0]"), and says
// why. Every decoder of this package returns one.
type FieldError = fields.FieldError
