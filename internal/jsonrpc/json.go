package jsonrpc

import "shinken.dev/go/internal/strictjson"

// The JSON of the lines is strict JSON, read by package strictjson, the
// module's one strict decoder: Parse takes a line apart with its Scanner.
// The names below are that package's, kept here for the callers that
// read a message's params with the codec's names.

// MaxDepth bounds how deeply arrays and objects may nest
// (strictjson.MaxDepth).
const MaxDepth = strictjson.MaxDepth

// MaxKeys bounds the members of one object (strictjson.MaxKeys).
const MaxKeys = strictjson.MaxKeys

// A Kind is the kind of a JSON value (strictjson.Kind).
type Kind = strictjson.Kind

// Kinds of JSON values.
const (
	KindInvalid = strictjson.KindInvalid
	KindNull    = strictjson.KindNull
	KindBool    = strictjson.KindBool
	KindNumber  = strictjson.KindNumber
	KindString  = strictjson.KindString
	KindArray   = strictjson.KindArray
	KindObject  = strictjson.KindObject
)

// Validate reports whether data is exactly one strict JSON value
// (strictjson.Validate).
func Validate(data []byte) error { return strictjson.Validate(data) }

// Members walks the members of a validated object (strictjson.Members).
func Members(data []byte, fn func(key, value []byte) error) error {
	return strictjson.Members(data, fn)
}

// Elements walks the elements of a validated array (strictjson.Elements).
func Elements(data []byte, fn func(i int, value []byte) error) error {
	return strictjson.Elements(data, fn)
}

// KindOf tells the kind of the raw value data (strictjson.KindOf).
func KindOf(data []byte) Kind { return strictjson.KindOf(data) }

// String decodes a raw JSON string (strictjson.String).
func String(data []byte) (string, error) { return strictjson.String(data) }

// Int decodes a raw JSON integer (strictjson.Int).
func Int(data []byte) (int64, error) { return strictjson.Int(data) }

// Number decodes a raw JSON number (strictjson.Number).
func Number(data []byte) (float64, error) { return strictjson.Number(data) }

// Bool decodes a raw JSON boolean (strictjson.Bool).
func Bool(data []byte) (bool, error) { return strictjson.Bool(data) }

// AppendString appends s to dst as a JSON string (strictjson.AppendString).
func AppendString(dst []byte, s string) []byte { return strictjson.AppendString(dst, s) }
