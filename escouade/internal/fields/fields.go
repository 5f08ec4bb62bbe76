// Package fields decodes the objects of the plugin protocol and of the
// manifest into tagged structs, by name, with the module's one strict
// decoder (package strictjson) rather than encoding/json, which matches
// keys without regard to case and lets the last of two equal keys win.
// Here a key matches only as written, a key given twice is an error, and
// every error is a FieldError that names the field's path. The protocol's
// messages (package protocol) and the Host's manifest and params are
// decoded with it.
//
// A struct's fields are named by their json tags; wire:"required" says a
// field must be present (see package strictjson). Decode reads a message,
// whose unknown fields are ignored (the protocol's messages may grow
// fields); DecodeStrict reads a format whose every field is known (the
// manifest), and goes on past each problem so that one pass names them
// all.
package fields

import (
	"errors"
	"fmt"
	"strings"

	"shinken.dev/go/internal/strictjson"
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
	ErrWantArray  = errors.New("want an array")
	ErrWantString = errors.New("want a string")
	ErrWantInt    = errors.New("want an integer")
	ErrWantBool   = errors.New("want true or false")
	ErrWantNumber = errors.New("want a number")
	ErrGivenTwice = errors.New("given twice")
	ErrMissing    = errors.New("missing")
)

// MaxProblems bounds the problems one decoding names; past it, the rest
// are counted, so that the error stays small whatever the text.
const MaxProblems = 50

// Problems gathers the problems of one decoding, up to MaxProblems, and
// counts the rest. The zero Problems is empty and ready to use.
type Problems struct {
	errs []error
	more int             // problems past MaxProblems
	bad  map[string]bool // the paths of the FieldErrors recorded
}

// Full reports whether the next problem would only be counted. A checker
// may then stop checking values one by one: the count is of the problems
// found, and a check not made finds none.
func (p *Problems) Full() bool { return len(p.errs) >= MaxProblems }

// Add records err; nil is ignored. Past MaxProblems it is only counted.
func (p *Problems) Add(err error) {
	if err != nil && p.Full() {
		p.more++
		return
	}
	if fe, ok := err.(*FieldError); ok {
		if p.bad == nil {
			p.bad = map[string]bool{}
		}
		p.bad[fe.Path] = true
	}
	switch {
	case err == nil:
	case len(p.errs) < MaxProblems:
		p.errs = append(p.errs, err)
	default:
		p.more++
	}
}

// At reports whether a problem was recorded at path itself: a value that
// did not decode, whose further checks would only repeat it.
func (p *Problems) At(path string) bool { return p.bad[path] }

// Any reports whether a problem was recorded.
func (p *Problems) Any() bool { return len(p.errs) > 0 || p.more > 0 }

// Addf records a FieldError at path; past MaxProblems it only counts it,
// without formatting it.
func (p *Problems) Addf(path, format string, args ...any) {
	if p.Full() {
		p.more++
		return
	}
	p.Add(Errorf(path, format, args...))
}

// Err joins the problems recorded, nil when there were none.
func (p *Problems) Err() error {
	if p.more > 0 {
		return errors.Join(append(p.errs, fmt.Errorf("escouade: and %d more problems", p.more))...)
	}
	return errors.Join(p.errs...)
}

// Decode decodes the JSON object raw into v, a pointer to a tagged struct,
// by the strictest reading of package strictjson (null is no value but
// for json.RawMessage and any, an integer is written as one, no lone
// surrogate), ignoring keys the structs do not name. Every problem with a
// field is a FieldError; all of them, up to MaxProblems, are returned,
// joined. A text that is not strict JSON fails with one FieldError that
// wraps a *strictjson.SyntaxError.
func Decode(raw []byte, v any) error {
	// Most messages hold: decode once, stopping at a problem, and only
	// then again to name every problem.
	if err := (strictjson.Options{Open: true}).Unmarshal(raw, v); err == nil {
		return nil
	}
	var p Problems
	decode(raw, v, true, &p)
	return p.Err()
}

// DecodeStrict is Decode for a format whose every key is known: an
// unknown one is a FieldError wrapping ErrUnknownField. raw is the value
// at path (the paths of its problems start there: "" at the top). Its
// problems are added to p, so that a caller that checks more of the values
// gathers every problem in one place.
func DecodeStrict(raw []byte, path string, v any, p *Problems) {
	o := strictjson.Options{Full: p.Full, Report: func(e *strictjson.Error) {
		if p.Full() {
			p.more++ // neither path nor message: past MaxProblems, counted
			return
		}
		p.Add(Under(path, FromStrict(e)))
	}}
	if err := o.Unmarshal(raw, v); err != nil {
		p.Add(Under(path, FromStrict(err)))
	}
}

func decode(raw []byte, v any, open bool, p *Problems) {
	o := strictjson.Options{Open: open, Full: p.Full, Report: func(e *strictjson.Error) {
		if p.Full() {
			p.more++
			return
		}
		p.Add(FromStrict(e))
	}}
	if err := o.Unmarshal(raw, v); err != nil {
		p.Add(FromStrict(err))
	}
}

// FromStrict turns an error of package strictjson into a FieldError: its
// JSON path ("$.run.command[1]") becomes the field's ("run.command[1]"),
// and its kind one of this package's reasons.
func FromStrict(err error) error {
	var e *strictjson.Error
	if !errors.As(err, &e) {
		return &FieldError{Err: err}
	}
	path := strings.TrimPrefix(strings.TrimPrefix(e.Path, "$"), ".")
	why := e.Err
	switch e.Err {
	case strictjson.ErrMissing:
		path, why = Join(path, e.Key), ErrMissing
	case strictjson.ErrDuplicateKey:
		why = ErrGivenTwice
	case strictjson.ErrUnknownField:
		why = ErrUnknownField
	case strictjson.ErrType:
		why = wantKind[e.Want]
		if why == nil {
			why = errors.New(e.Msg)
		}
	case strictjson.ErrRange, strictjson.ErrNotTrue:
		why = errors.New(e.Msg)
	}
	return &FieldError{Path: path, Err: why}
}

// wantKind is the reason of a value of the wrong type, by the JSON type
// wanted.
var wantKind = map[string]error{
	"object":  ErrWantObject,
	"array":   ErrWantArray,
	"string":  ErrWantString,
	"integer": ErrWantInt,
	"number":  ErrWantNumber,
	"boolean": ErrWantBool,
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
	s, err := strictjson.String(v)
	if err != nil {
		return "", ErrWantString
	}
	return s, nil
}

// Int decodes a JSON integer.
func Int(v []byte) (int64, error) {
	n, err := strictjson.Int(v)
	if err != nil {
		return 0, ErrWantInt
	}
	return n, nil
}

// Bool decodes true or false.
func Bool(v []byte) (bool, error) {
	b, err := strictjson.Bool(v)
	if err != nil {
		return false, ErrWantBool
	}
	return b, nil
}

// Strict checks raw as strict JSON (UTF-8, no duplicate key) before it is
// handed to encoding/json, which checks neither. Decode needs no such
// check: it reads by the same rules.
func Strict(raw []byte) error { return strictjson.Validate(raw) }
