package jsonrpc

import (
	"errors"
	"fmt"
)

// Error codes of JSON-RPC 2.0.
const (
	CodeParse          = -32700 // a line that is not JSON
	CodeInvalidRequest = -32600 // a message that is not JSON-RPC 2.0
	CodeMethodNotFound = -32601 // a method the other side does not serve
	CodeInvalidParams  = -32602 // parameters that do not hold
	CodeInternal       = -32603 // the handler failed
)

// An Error is a JSON-RPC error object: the error a handler returns to answer
// with a code, and the error a call returns when the other side answered
// with one.
type Error struct {
	Code    int64
	Message string
	Data    []byte // raw JSON; nil when absent
}

// Error returns the code and the message.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc: error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code, so that callers
// compare codes and never messages.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

var (
	// ErrClosed is returned by calls on a connection that has ended, and by
	// the calls still waiting when it ends.
	ErrClosed = errors.New("jsonrpc: connection closed")
	// ErrTimeout is returned by a call whose method's timeout passed first.
	ErrTimeout = errors.New("jsonrpc: no answer in time")
	// ErrBackpressure is returned when the other side reads so little that
	// what waits to be written passed the limit; the message is not sent.
	ErrBackpressure = errors.New("jsonrpc: too much waiting to be written")
	// ErrLineTooLong says a line passed the byte cap; it was discarded
	// unread.
	ErrLineTooLong = errors.New("jsonrpc: line too long")
)
