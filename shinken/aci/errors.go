package aci

import (
	"errors"
	"fmt"
	"strings"
)

// A Code is the machine-readable prefix of a wire error string. A wire error
// reads "code: detail"; clients act on the code, never on the detail.
type Code string

// Wire error codes. They are the only prefixes the Runtime puts on an error
// string, and the Client maps each back to the matching sentinel below.
const (
	CodeInvalidMessage       Code = "invalid_message"        // the frame is not a valid ACI message
	CodeInvalidAction        Code = "invalid_action"         // the action breaks a schema rule
	CodeUnsupportedVerb      Code = "unsupported_verb"       // this runtime or backend cannot do the verb
	CodeUnsupported          Code = "unsupported"            // a feature of a supported verb is unavailable
	CodeUnauthorized         Code = "unauthorized"           // missing or wrong token
	CodePermissionDenied     Code = "permission_denied"      // an authorizer refused
	CodeStaleElementRef      Code = "stale_element_ref"      // the element is gone: observe again
	CodeElementNotActionable Code = "element_not_actionable" // the element cannot take the action
	CodeNoSuchAction         Code = "no_such_action"         // the element has no such action
	CodeA11yUnavailable      Code = "a11y_unavailable"       // the accessibility tree cannot be read
	CodeNoSuchWindow         Code = "no_such_window"         // no window has that id or title
	CodeNoSuchApp            Code = "no_such_app"            // launch_app found no such program
	CodeExecSpawnFailed      Code = "exec_spawn_failed"      // the command could not be started
	CodeTooManyExecs         Code = "too_many_execs"         // the exec concurrency limit is reached
	CodeTooLarge             Code = "too_large"              // a value is over a size limit
	CodeTimeout              Code = "timeout"                // the operation ran out of time
	CodeBackend              Code = "backend_error"          // the backend failed
	CodeInternal             Code = "internal_error"         // a bug in the runtime
	CodeClosed               Code = "closed"                 // the connection or runtime is closed
)

// An Error is an error with a wire code. Its string is "code: detail".
//
// errors.Is(err, ErrX) reports whether err carries ErrX's code, whatever its
// detail: the sentinels below are Errors with an empty detail.
type Error struct {
	Code   Code
	Detail string
	Err    error // the underlying cause, if any
}

// Error returns "code: detail", or the code alone when there is no detail.
func (e *Error) Error() string {
	if e.Detail == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Detail
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code and, when the
// target has one, the same detail.
//
// An Error whose code is CodeUnsupported also matches errors.ErrUnsupported,
// so a caller tests for "cannot be done here" the same way whether the error
// came from a backend in-process or over the wire.
func (e *Error) Is(target error) bool {
	if target == errors.ErrUnsupported {
		return e.Code == CodeUnsupported
	}
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Detail == "" || t.Detail == e.Detail)
}

// Errorf returns an *Error with code and a formatted detail. A %w verb wraps
// the cause as usual. A detail starting with the code already (an error of
// that code, by %v or %w) does not repeat it.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	detail := err.Error()
	if d, ok := strings.CutPrefix(detail, string(code)+": "); ok {
		detail = d
	} else if detail == string(code) {
		detail = ""
	}
	return &Error{Code: code, Detail: detail, Err: errors.Unwrap(err)}
}

// Sentinels, one per code, for errors.Is. Backends wrap them to say what went
// wrong: fmt.Errorf("%w: widget 7 is gone", aci.ErrStaleElementRef).
var (
	ErrInvalidMessage       = &Error{Code: CodeInvalidMessage}
	ErrInvalidAction        = &Error{Code: CodeInvalidAction}
	ErrUnsupportedVerb      = &Error{Code: CodeUnsupportedVerb}
	ErrUnauthorized         = &Error{Code: CodeUnauthorized}
	ErrPermissionDenied     = &Error{Code: CodePermissionDenied}
	ErrStaleElementRef      = &Error{Code: CodeStaleElementRef}
	ErrElementNotActionable = &Error{Code: CodeElementNotActionable}
	ErrNoSuchAction         = &Error{Code: CodeNoSuchAction}
	ErrA11yUnavailable      = &Error{Code: CodeA11yUnavailable}
	ErrNoSuchWindow         = &Error{Code: CodeNoSuchWindow}
	ErrNoSuchApp            = &Error{Code: CodeNoSuchApp}
	ErrExecSpawnFailed      = &Error{Code: CodeExecSpawnFailed}
	ErrTooManyExecs         = &Error{Code: CodeTooManyExecs}
	ErrTooLarge             = &Error{Code: CodeTooLarge}
	ErrTimeout              = &Error{Code: CodeTimeout}
	ErrBackend              = &Error{Code: CodeBackend}
	ErrInternal             = &Error{Code: CodeInternal}
	ErrClosed               = &Error{Code: CodeClosed}
)

var knownCodes = map[Code]bool{}

func init() {
	for _, c := range []Code{CodeInvalidMessage, CodeInvalidAction, CodeUnsupportedVerb, CodeUnsupported,
		CodeUnauthorized, CodePermissionDenied, CodeStaleElementRef, CodeElementNotActionable,
		CodeNoSuchAction, CodeA11yUnavailable, CodeNoSuchWindow, CodeNoSuchApp, CodeExecSpawnFailed,
		CodeTooManyExecs, CodeTooLarge, CodeTimeout, CodeBackend, CodeInternal, CodeClosed} {
		knownCodes[c] = true
	}
}

// WireError converts any error to the string sent on the wire: the code of
// the first *Error in its chain (errors.ErrUnsupported maps to unsupported,
// context deadlines to timeout, anything else to backend_error), a colon and
// the error's text without a repeated code.
func WireError(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	code := CodeBackend
	var e *Error
	switch {
	case errors.As(err, &e):
		code = e.Code
	case errors.Is(err, errors.ErrUnsupported):
		code = CodeUnsupported
	case isDeadline(err):
		code = CodeTimeout
	}
	if strings.HasPrefix(msg, string(code)+":") || msg == string(code) {
		return msg
	}
	return string(code) + ": " + msg
}

// ParseWireError turns a wire error string back into an *Error. A string
// without a known code prefix gets CodeBackend.
func ParseWireError(s string) *Error {
	code, detail, ok := strings.Cut(s, ":")
	if !ok || !knownCodes[Code(code)] {
		if knownCodes[Code(s)] {
			return &Error{Code: Code(s)}
		}
		return &Error{Code: CodeBackend, Detail: s}
	}
	return &Error{Code: Code(code), Detail: strings.TrimPrefix(detail, " ")}
}

func isDeadline(err error) bool {
	type timeout interface{ Timeout() bool }
	var t timeout
	return errors.As(err, &t) && t.Timeout()
}

// CodeOf returns the code WireError gives err: its *Error's code,
// CodeUnsupported for errors.ErrUnsupported, CodeTimeout for a timeout,
// CodeBackend for anything else.
func CodeOf(err error) Code {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, errors.ErrUnsupported):
		return CodeUnsupported
	case isDeadline(err):
		return CodeTimeout
	}
	return CodeBackend
}
