// Package fields decodes JSON objects field by field, by hand rather than
// through encoding/json, which matches keys without regard to case and
// lets the last of two equal keys win. Here a key matches only as written,
// a known key given twice is an error, and every error is a FieldError
// that names the field's path. The protocol's messages (package protocol)
// and the Host's manifest and params are decoded with it.
package fields

import (
	"errors"
	"fmt"
	"strings"

	"shinken.dev/go/internal/jsonrpc"
)

// ErrUnknownField is wrapped by the FieldError of a field that the format
// does not have.
var ErrUnknownField = errors.New("escouade: unknown field")

// A FieldError names the field of a manifest, or of a message's params,
// that is wrong, by its path ("permissions.files.agentRepo",
// "run.command[0]"), and says why.
type FieldError struct {
	Path string
	Err  error
}

// Error returns the path and why, as "escouade: run.command: missing".
func (e *FieldError) Error() string {
	why := strings.TrimPrefix(e.Err.Error(), "escouade: ")
	if e.Path == "" {
		return "escouade: " + why
	}
	return "escouade: " + e.Path + ": " + why
}

// Unwrap returns why: ErrUnknownField for a field the format does not have.
func (e *FieldError) Unwrap() error { return e.Err }

// Errorf returns a FieldError at path.
func Errorf(path string, format string, args ...any) *FieldError {
	return &FieldError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Why a value does not hold.
var (
	ErrWantObject = errors.New("want an object")
	ErrWantString = errors.New("want a string")
	ErrWantInt    = errors.New("want an integer")
	ErrWantBool   = errors.New("want true or false")
	ErrWantNumber = errors.New("want a number")
	ErrGivenTwice = errors.New("given twice")
	ErrMissing    = errors.New("missing")
)

// Object walks the members of the object raw. For a key in names, set is
// called with its index and value. A known key given twice is an error; an
// unknown key is an error when strict, and ignored otherwise (the
// protocol's messages may grow fields). It returns a bit per name seen.
//
// Paths are made only for errors, and relative to raw: an error set returns
// is put under the member's name, so that nested objects need not know
// where they are.
func Object(raw []byte, names []string, strict bool, set func(i int, v []byte) error) (uint64, error) {
	if jsonrpc.KindOf(raw) != jsonrpc.KindObject {
		return 0, &FieldError{Err: ErrWantObject}
	}
	var seen uint64
	err := jsonrpc.Members(raw, func(k, v []byte) error {
		for i, n := range names {
			if string(k) != n {
				continue
			}
			if seen&(1<<i) != 0 {
				return &FieldError{Path: n, Err: ErrGivenTwice}
			}
			seen |= 1 << i
			if err := set(i, v); err != nil {
				return Under(n, err)
			}
			return nil
		}
		if strict {
			return &FieldError{Path: string(k), Err: ErrUnknownField}
		}
		return nil
	})
	if fe := (*FieldError)(nil); err != nil && !errors.As(err, &fe) {
		err = &FieldError{Err: err}
	}
	return seen, err
}

// Under puts err under the field name: the paths of its FieldErrors are
// prefixed with name, and any other error becomes the field's.
func Under(name string, err error) error {
	switch e := err.(type) {
	case *FieldError:
		return &FieldError{Path: Join(name, e.Path), Err: e.Err}
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		out := make([]error, len(errs))
		for i, x := range errs {
			out[i] = Under(name, x)
		}
		return errors.Join(out...)
	}
	return &FieldError{Path: name, Err: err}
}

// Require checks that every name whose bit is in mask was seen, and names
// every one that was not.
func Require(seen, mask uint64, names []string) error {
	var missing []error
	for i, n := range names {
		if mask&(1<<i) != 0 && seen&(1<<i) == 0 {
			missing = append(missing, &FieldError{Path: n, Err: ErrMissing})
		}
	}
	return errors.Join(missing...)
}

// Join appends name to path: "a.b", or "a[0]" for an index.
func Join(path, name string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	case name[0] == '[':
		return path + name
	}
	return path + "." + name
}

// String decodes a JSON string.
func String(v []byte) (string, error) {
	s, err := jsonrpc.String(v)
	if err != nil {
		return "", ErrWantString
	}
	return s, nil
}

// Int decodes a JSON integer.
func Int(v []byte) (int64, error) {
	n, err := jsonrpc.Int(v)
	if err != nil {
		return 0, ErrWantInt
	}
	return n, nil
}

// Bool decodes true or false.
func Bool(v []byte) (bool, error) {
	b, err := jsonrpc.Bool(v)
	if err != nil {
		return false, ErrWantBool
	}
	return b, nil
}

// Strict checks raw as strict JSON (UTF-8, no duplicate key) before it is
// handed to encoding/json, which checks neither.
func Strict(raw []byte) error { return jsonrpc.Validate(raw) }
