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
// called with its index and the member's path. A known key given twice is an
// error; an unknown key is an error when strict, and ignored otherwise (the
// protocol's messages may grow fields). It returns a bit per name seen.
func object(raw []byte, path string, names []string, strict bool, set func(i int, path string, v []byte) error) (uint64, error) {
	if jsonrpc.KindOf(raw) != jsonrpc.KindObject {
		return 0, fieldErr(path, "want an object")
	}
	var seen uint64
	err := jsonrpc.Members(raw, func(k, v []byte) error {
		for i, n := range names {
			if string(k) != n {
				continue
			}
			p := join(path, n)
			if seen&(1<<i) != 0 {
				return fieldErr(p, "given twice")
			}
			seen |= 1 << i
			return set(i, p, v)
		}
		if strict {
			return &FieldError{Path: join(path, string(k)), Err: ErrUnknownField}
		}
		return nil
	})
	if fe := (*FieldError)(nil); err != nil && !errors.As(err, &fe) {
		err = &FieldError{Path: path, Err: err}
	}
	return seen, err
}

// require checks that every name whose bit is in mask was seen, and names
// every one that was not.
func require(seen, mask uint64, names []string, path string) error {
	var missing []error
	for i, n := range names {
		if mask&(1<<i) != 0 && seen&(1<<i) == 0 {
			missing = append(missing, fieldErr(join(path, n), "missing"))
		}
	}
	return errors.Join(missing...)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func str(path string, v []byte) (string, error) {
	s, err := jsonrpc.String(v)
	if err != nil {
		return "", fieldErr(path, "want a string")
	}
	return s, nil
}

func integer(path string, v []byte) (int64, error) {
	n, err := jsonrpc.Int(v)
	if err != nil {
		return 0, fieldErr(path, "want an integer")
	}
	return n, nil
}

func boolean(path string, v []byte) (bool, error) {
	b, err := jsonrpc.Bool(v)
	if err != nil {
		return false, fieldErr(path, "want true or false")
	}
	return b, nil
}

// strictJSON checks raw as strict JSON (UTF-8, no duplicate key) before it is
// handed to encoding/json, which checks neither.
func strictJSON(path string, raw []byte) error {
	if err := jsonrpc.Validate(raw); err != nil {
		return &FieldError{Path: path, Err: err}
	}
	return nil
}

// paramsMessage words the errors of params that do not hold for the
// invalidParams answer: every field named, on one line.
func paramsMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), "escouade: ", "")
	return "invalid params: " + strings.ReplaceAll(msg, "\n", "; ")
}
