package escouade

import (
	"errors"
	"strings"

	"shinken.dev/go/internal/jsonrpc"
)

// The decoders of this package walk JSON by hand rather than through
// encoding/json, which matches keys without regard to case and lets the
// last of two equal keys win. Here a key matches only as written, a known
// key given twice is an error, and every error names the field's path.

// object walks the members of the object raw. For a key in names, set is
// called with its index and value. A known key given twice is an error; an
// unknown key is an error when strict, and ignored otherwise (the
// protocol's messages may grow fields). It returns a bit per name seen.
//
// Paths are made only for errors, and relative to raw: an error set returns
// is put under the member's name, so that nested objects need not know
// where they are.
func object(raw []byte, names []string, strict bool, set func(i int, v []byte) error) (uint64, error) {
	if jsonrpc.KindOf(raw) != jsonrpc.KindObject {
		return 0, &FieldError{Err: errWantObject}
	}
	var seen uint64
	err := jsonrpc.Members(raw, func(k, v []byte) error {
		for i, n := range names {
			if string(k) != n {
				continue
			}
			if seen&(1<<i) != 0 {
				return &FieldError{Path: n, Err: errGivenTwice}
			}
			seen |= 1 << i
			if err := set(i, v); err != nil {
				return under(n, err)
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

var (
	errWantObject = errors.New("want an object")
	errWantString = errors.New("want a string")
	errWantInt    = errors.New("want an integer")
	errWantBool   = errors.New("want true or false")
	errWantNumber = errors.New("want a number")
	errGivenTwice = errors.New("given twice")
	errMissing    = errors.New("missing")
)

// under puts err under the field name: the paths of its FieldErrors are
// prefixed with name, and any other error becomes the field's.
func under(name string, err error) error {
	switch e := err.(type) {
	case *FieldError:
		return &FieldError{Path: join(name, e.Path), Err: e.Err}
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		out := make([]error, len(errs))
		for i, x := range errs {
			out[i] = under(name, x)
		}
		return errors.Join(out...)
	}
	return &FieldError{Path: name, Err: err}
}

// require checks that every name whose bit is in mask was seen, and names
// every one that was not.
func require(seen, mask uint64, names []string) error {
	var missing []error
	for i, n := range names {
		if mask&(1<<i) != 0 && seen&(1<<i) == 0 {
			missing = append(missing, &FieldError{Path: n, Err: errMissing})
		}
	}
	return errors.Join(missing...)
}

func join(path, name string) string {
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

func str(v []byte) (string, error) {
	s, err := jsonrpc.String(v)
	if err != nil {
		return "", errWantString
	}
	return s, nil
}

func integer(v []byte) (int64, error) {
	n, err := jsonrpc.Int(v)
	if err != nil {
		return 0, errWantInt
	}
	return n, nil
}

func boolean(v []byte) (bool, error) {
	b, err := jsonrpc.Bool(v)
	if err != nil {
		return false, errWantBool
	}
	return b, nil
}

// strictJSON checks raw as strict JSON (UTF-8, no duplicate key) before it is
// handed to encoding/json, which checks neither.
func strictJSON(raw []byte) error { return jsonrpc.Validate(raw) }

// paramsMessage words the errors of params that do not hold for the
// invalidParams answer: every field named, on one line.
func paramsMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), "escouade: ", "")
	return "invalid params: " + strings.ReplaceAll(msg, "\n", "; ")
}
