// Package strictjson is the module's one strict JSON decoder: one scanner
// (scan.go) that holds every rule of strict JSON — UTF-8, escapes,
// numbers, duplicate keys, the key-count bound MaxKeys and the depth bound
// MaxDepth — and, built on it, a decoder into Go structs the way a strict
// wire protocol wants it: unknown fields are errors (unless the field is
// tagged open, or the Options say every object is), duplicate keys are
// errors, keys match case-sensitively, required fields are checked by
// presence, and every error names the JSON path of the offending value.
// Package jsonrpc reads its lines with the same Scanner.
//
// Struct fields use the json tag's name. A second tag, wire, holds the
// options encoding/json has no word for: "required" (the key must be
// present, even if its value is null), "open" (the nested object may carry
// keys the struct does not know; they are skipped) and "true" (a bool that,
// when present, must be true).
//
// The rules of the text are the same for every format; what a format
// reads its values as (null, whole numbers, lone surrogates) is chosen in
// its Options, whose zero value is the strictest reading.
package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Options are the choices of one format. The zero Options are the
// strictest reading: every object's keys known, null only where a value
// may be anything, an integer written as one, lone surrogates refused.
type Options struct {
	// Skip is a top-level key accepted and its value skipped: the
	// discriminator a caller already read ("type").
	Skip string
	// Open lets every object carry keys its struct does not name; they
	// are skipped (after the same checks as any value), as in a format
	// whose messages may grow fields. Without it only fields tagged
	// wire:"open" are.
	Open bool
	// NullIsZero decodes null into a pointer, a slice, a map or an
	// interface as its zero value, as encoding/json does. Otherwise null
	// is a value of its own kind, refused for every type but any and
	// json.RawMessage (which keeps the bytes "null").
	NullIsZero bool
	// WholeNumbers lets an integer field take any number whose value is
	// whole (1.0, 1e3), as JSON Schema's "integer" does, saturating past
	// the field's range at its bound. Otherwise an integer field takes an
	// integer literal within its range only.
	WholeNumbers bool
	// ReplaceLoneSurrogates reads a \u escape of a lone surrogate as
	// U+FFFD, as encoding/json and JSON Schema validators do (a browser's
	// JSON.stringify writes one for a string cut inside a pair). Otherwise
	// it is a syntax error.
	ReplaceLoneSurrogates bool
	// Report, when set, is given each problem with a field (a value of the
	// wrong type or out of range, an unknown field, a field given twice or
	// missing, a bool that must be true), and the decoding goes on past
	// it, the value skipped, so that one pass finds every problem: the
	// decoding then fails only on a text that is not strict JSON. Without
	// it the first problem is returned.
	Report func(*Error)
	// Full, when set with Report, says that Report's receiver keeps no
	// more problems: while it returns true, each further problem reaches
	// Report with its Err only (Path and Msg empty), so that a receiver
	// that only counts them pays for no formatting.
	Full func() bool
}

// Schema is the reading of a format whose law is a JSON Schema, as the
// schema's validators read a text: null is the zero value of a pointer, a
// slice or a map, a whole number is an integer (saturating past the
// field's range), a lone surrogate is U+FFFD. The ACI (package aci) and the
// session inspector's page read their messages so.
var Schema = Options{NullIsZero: true, WholeNumbers: true, ReplaceLoneSurrogates: true}

// An Error is a decoding error at a JSON path such as "$.action.target.x".
type Error struct {
	Path string
	Msg  string
	// Err is the kind of problem: ErrType, ErrRange, ErrUnknownField,
	// ErrDuplicateKey, ErrMissing or ErrNotTrue; or the *SyntaxError of a
	// text that is not strict JSON.
	Err error
	// Want is the JSON type a value of the wrong type should have been
	// ("string", "integer", "object", ...), for ErrType.
	Want string
	// Key is the missing field's name, for ErrMissing; Path is then the
	// object's.
	Key string
}

// Error returns the path and why: "$.action.x: expected number, got string".
func (e *Error) Error() string { return e.Path + ": " + e.Msg }

// Unwrap returns the kind of problem, Err.
func (e *Error) Unwrap() error { return e.Err }

// The kinds of problems with a field, wrapped by an Error.
var (
	ErrType         = errors.New("strictjson: a value of the wrong type")
	ErrRange        = errors.New("strictjson: a number out of range")
	ErrUnknownField = errors.New("strictjson: unknown field")
	ErrDuplicateKey = errors.New("strictjson: duplicate key")
	ErrMissing      = errors.New("strictjson: missing required field")
	ErrNotTrue      = errors.New("strictjson: must be true when present")
)

// Unmarshal decodes data into v, which must be a non-nil pointer, by the
// strictest reading (the zero Options).
func Unmarshal(data []byte, v any) error { return Options{}.Unmarshal(data, v) }

// Unmarshal decodes data into v, which must be a non-nil pointer.
func (o Options) Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &Error{Path: "$", Msg: "decode target must be a non-nil pointer", Err: ErrType}
	}
	d := decoders.Get().(*decoder)
	d.data, d.pos, d.o, d.skipSeen = data, 0, o, false
	d.sc = Scanner{Data: data, ReplaceLoneSurrogates: o.ReplaceLoneSurrogates}
	d.path = d.pathBuf[:0]
	err := d.top(rv.Elem())
	// Hold nothing of the text or the caller's while pooled.
	clear(d.pathBuf[:min(d.deepest, len(d.pathBuf))])
	for _, ks := range d.sets {
		ks.reset()
	}
	d.data, d.o, d.sc, d.path, d.deepest = nil, Options{}, Scanner{}, nil, 0
	decoders.Put(d)
	return err
}

// top decodes the whole text into v.
func (d *decoder) top(v reflect.Value) error {
	d.skipSpace()
	if err := d.value(v, false, 0); err != nil {
		return err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.syntax(&SyntaxError{d.pos, "unexpected data after the top-level value"})
	}
	return nil
}

// decoders keeps decoders, with their path buffers, between messages: a
// decoder is as big as a small message.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

// Valid reports whether data is one strict JSON value, read as o reads
// it, and returns a path-naming error if not.
func (o Options) Valid(data []byte) error {
	var v any
	o.Report = nil
	return o.Unmarshal(data, &v)
}

type decoder struct {
	data     []byte
	pos      int
	o        Options
	sc       Scanner // skips values by the same rules
	path     []pathElem
	deepest  int // the longest the path was
	skipSeen bool
	pathBuf  [16]pathElem
	sets     []*keySet // see keySet
	// infos keeps the structs this decoder read last, kept while it is
	// pooled: a lookup costs less than the cache's.
	infos [4]struct {
		t  reflect.Type
		si *structInfo
	}
}

// keySet returns the set of keys for an object at depth, emptied: one per
// depth, kept while the decoder is pooled, as objects at one depth come
// one after the other.
func (d *decoder) keySet(depth int) *keySet {
	for len(d.sets) <= depth {
		d.sets = append(d.sets, new(keySet))
	}
	ks := d.sets[depth]
	ks.reset()
	return ks
}

// info returns the structInfo of t.
func (d *decoder) info(t reflect.Type) *structInfo {
	for _, c := range d.infos {
		if c.t == t {
			return c.si
		}
	}
	si := infoFor(t)
	copy(d.infos[1:], d.infos[:])
	d.infos[0].t, d.infos[0].si = t, si
	return si
}

// push adds an element to the path and returns its index.
func (d *decoder) push(p pathElem) int {
	d.path = append(d.path, p)
	d.deepest = max(d.deepest, len(d.path))
	return len(d.path) - 1
}

type pathElem struct {
	key   []byte // raw key bytes (escapes undone), for error messages
	index int    // -1 for a key
}

func (d *decoder) pathString() string {
	var b strings.Builder
	b.WriteString("$")
	for _, p := range d.path {
		if p.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(p.index))
			b.WriteByte(']')
		} else {
			b.WriteByte('.')
			if len(p.key) > maxQuotedKey { // a map's key, as long as the text
				cut := maxQuotedKey
				for cut > 0 && !utf8.RuneStart(p.key[cut]) {
					cut-- // not inside a character
				}
				b.Write(p.key[:cut])
				b.WriteString("…")
			} else {
				b.Write(p.key)
			}
		}
	}
	return b.String()
}

// problem makes the Error of kind at the current path.
func (d *decoder) problem(kind error, format string, args ...any) *Error {
	if d.o.Full != nil && d.o.Full() {
		return &Error{Err: kind}
	}
	return &Error{Path: d.pathString(), Msg: fmt.Sprintf(format, args...), Err: kind}
}

// syntax makes a SyntaxError an Error at the current path.
func (d *decoder) syntax(se *SyntaxError) *Error {
	return &Error{Path: d.pathString(), Msg: se.Msg, Err: se}
}

// asError turns an error of the scanner into an Error at the current path.
func (d *decoder) asError(err error) error {
	if se, ok := err.(*SyntaxError); ok {
		return d.syntax(se)
	}
	return err
}

// fail reports a problem with a field and returns nil when the Options
// gather them; it returns the problem otherwise.
func (d *decoder) fail(e *Error) error {
	if d.o.Report != nil {
		d.o.Report(e)
		return nil
	}
	return e
}

// failSkip fails e, then, when decoding goes on, skips the value at the
// current position.
func (d *decoder) failSkip(e *Error, depth int) error {
	if err := d.fail(e); err != nil {
		return err
	}
	return d.skip(depth)
}

// startsValue reports whether c may start a JSON value.
func startsValue(c byte) bool {
	switch c {
	case '"', '{', '[', 't', 'f', 'n', '-':
		return true
	}
	return c >= '0' && c <= '9'
}

func (d *decoder) skipSpace() { d.pos = SkipSpace(d.data, d.pos) }

func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// kindName names the JSON kind starting at the current byte, for messages.
func (d *decoder) kindName() string {
	switch c := d.peek(); {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	case c == 0:
		return "end of input"
	default:
		return fmt.Sprintf("invalid character %q", c)
	}
}

// typeErr is the problem of a value that is not of the type want; the
// value is skipped when decoding goes on.
func (d *decoder) typeErr(want string, depth int) error {
	if !startsValue(d.peek()) {
		// Not a value: a text that is not JSON, nothing to go on with.
		return d.syntax(&SyntaxError{d.pos, fmt.Sprintf("expected %s, got %s", want, d.kindName())})
	}
	e := d.problem(ErrType, "expected %s, got %s", want, d.kindName())
	e.Want = want
	return d.failSkip(e, depth)
}

type fieldInfo struct {
	name     string
	index    int
	required bool
	open     bool
	mustTrue bool
}

type structInfo struct {
	fields []fieldInfo
	byName map[string]int // name -> position in fields, for a struct of many
}

// fewFields is how many fields a struct may have for its keys to be
// looked up by comparing with each name rather than in a map: faster for
// the small objects of these wires.
const fewFields = 8

// lookup returns the position in fields of the field named key; hint is
// where to look first, as the fields of a message tend to come in the
// order of its struct.
func (si *structInfo) lookup(key []byte, hint int) (int, bool) {
	if hint < len(si.fields) && si.fields[hint].name == string(key) {
		return hint, true
	}
	if si.byName == nil {
		for i := range si.fields {
			if si.fields[i].name == string(key) {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := si.byName[string(key)]
	return i, ok
}

var structCache sync.Map // reflect.Type -> *structInfo

func infoFor(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("json")
		if !ok || tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fi := fieldInfo{name: name, index: i}
		for _, o := range strings.Split(f.Tag.Get("wire"), ",") {
			switch o {
			case "required":
				fi.required = true
			case "open":
				fi.open = true
			case "true":
				fi.mustTrue = true
			}
		}
		si.fields = append(si.fields, fi)
	}
	if len(si.fields) > fewFields {
		si.byName = make(map[string]int, len(si.fields))
		for i, f := range si.fields {
			si.byName[f.name] = i
		}
	}
	if len(si.fields) > 64 {
		panic("strictjson: struct " + t.String() + " has more than 64 fields")
	}
	v, _ := structCache.LoadOrStore(t, si)
	return v.(*structInfo)
}

var (
	anyType = reflect.TypeFor[any]()
	rawType = reflect.TypeFor[json.RawMessage]()
)

// value decodes the value at the current position into v; depth is the
// number of arrays and objects around it.
func (d *decoder) value(v reflect.Value, open bool, depth int) error {
	if d.peek() == 'n' {
		return d.null(v, depth)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(v.Elem(), open, depth)
	case reflect.Interface:
		if v.Type() != anyType {
			return d.problem(ErrType, "cannot decode into %s", v.Type())
		}
		x, err := d.anyValue(depth)
		if err != nil {
			return err
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		} else {
			v.SetZero()
		}
		return nil
	case reflect.Struct:
		return d.object(v, open, depth)
	case reflect.Map:
		return d.mapValue(v, depth)
	case reflect.Slice:
		if v.Type() == rawType {
			start := d.pos
			if err := d.skip(depth); err != nil {
				return err
			}
			raw := make([]byte, d.pos-start)
			copy(raw, d.data[start:d.pos])
			v.SetBytes(raw)
			return nil
		}
		return d.slice(v, depth)
	case reflect.String:
		if d.peek() != '"' {
			return d.typeErr("string", depth)
		}
		s, err := d.str()
		if err != nil {
			return err
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		switch d.peek() {
		case 't':
			v.SetBool(true)
			return d.literal("true")
		case 'f':
			v.SetBool(false)
			return d.literal("false")
		}
		return d.typeErr("boolean", depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return d.integer(v, depth)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return d.unsigned(v, depth)
	case reflect.Float32, reflect.Float64:
		if !d.atNumber() {
			return d.typeErr("number", depth)
		}
		f, _, err := d.number()
		if err != nil {
			return err
		}
		v.SetFloat(f)
		return nil
	}
	return d.problem(ErrType, "cannot decode into %s", v.Type())
}

// null decodes the null at the current position into v.
func (d *decoder) null(v reflect.Value, depth int) error {
	if err := d.literal("null"); err != nil {
		return err
	}
	switch k := v.Kind(); {
	case d.o.NullIsZero && (k == reflect.Pointer || k == reflect.Map || k == reflect.Slice || k == reflect.Interface),
		v.Type() == anyType:
		v.SetZero()
		return nil
	case v.Type() == rawType:
		v.SetBytes([]byte("null"))
		return nil
	}
	d.pos -= len("null")
	return d.typeErr(jsonKindOf(v.Type()), depth)
}

// integer decodes a number into the signed integer v.
func (d *decoder) integer(v reflect.Value, depth int) error {
	if !d.atNumber() {
		return d.typeErr("integer", depth)
	}
	bits := v.Type().Bits()
	if !d.o.WholeNumbers {
		start := d.pos
		lit, err := d.scanNumber()
		if err != nil {
			return err
		}
		n, err := Int(lit)
		if err != nil {
			d.pos = start
			return d.typeErr("integer", depth)
		}
		if lo, hi := int64(math.MinInt64>>(64-bits)), int64(math.MaxInt64>>(64-bits)); n < lo || n > hi {
			return d.fail(d.problem(ErrRange, "%s is out of range", cutLit(lit)))
		}
		v.SetInt(n)
		return nil
	}
	start := d.pos
	f, lit, err := d.number()
	if err != nil {
		return err
	}
	if f != math.Trunc(f) {
		d.pos = start
		e := d.problem(ErrType, "expected integer, got %s", cutLit(lit))
		e.Want = "integer"
		return d.failSkip(e, depth)
	}
	// An integer past the field's range saturates at its bound: the
	// schema sets no maximum, and every such field of the ACI is a size, a
	// duration or an id, for which the bound means "as much as there is"
	// or "no such thing". Past 2^53 digits are lost, as in any I-JSON
	// reader.
	bound := math.Ldexp(1, bits-1) // 2^(bits-1): one past the largest value
	switch {
	case f >= bound:
		v.SetInt(math.MaxInt64 >> (64 - bits))
	case f < -bound:
		v.SetInt(math.MinInt64 >> (64 - bits))
	default:
		v.SetInt(int64(f))
	}
	return nil
}

// unsigned decodes a number into the unsigned integer v.
func (d *decoder) unsigned(v reflect.Value, depth int) error {
	if !d.atNumber() {
		return d.typeErr("integer", depth)
	}
	bits := v.Type().Bits()
	start := d.pos
	if !d.o.WholeNumbers {
		lit, err := d.scanNumber()
		if err != nil {
			return err
		}
		n, err := Int(lit)
		if err != nil {
			d.pos = start
			return d.typeErr("integer", depth)
		}
		if n < 0 {
			return d.fail(d.problem(ErrRange, "expected a non-negative integer, got %s", cutLit(lit)))
		}
		if uint64(n) > math.MaxUint64>>(64-bits) {
			return d.fail(d.problem(ErrRange, "%s is out of range", cutLit(lit)))
		}
		v.SetUint(uint64(n))
		return nil
	}
	f, lit, err := d.number()
	if err != nil {
		return err
	}
	if f != math.Trunc(f) {
		d.pos = start
		e := d.problem(ErrType, "expected integer, got %s", cutLit(lit))
		e.Want = "integer"
		return d.failSkip(e, depth)
	}
	if f < 0 {
		return d.fail(d.problem(ErrRange, "expected a non-negative integer, got %s", cutLit(lit)))
	}
	if hi := math.Ldexp(1, bits); f >= hi {
		v.SetUint(math.MaxUint64 >> (64 - bits))
	} else {
		v.SetUint(uint64(f))
	}
	return nil
}

func jsonKindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Pointer:
		return jsonKindOf(t.Elem())
	}
	return "integer"
}

// members walks the object at the current position, itself inside depth
// containers: for each member it reads the key, sets it as the last
// element of the path, and calls f with the decoder at the member's
// value, which f must consume. The path is restored when the object ends
// well. An object of more than MaxKeys members, or one past MaxDepth, is
// not strict JSON.
func (d *decoder) members(depth int, f func(key []byte) error) error {
	if d.peek() != '{' {
		return d.typeErr("object", depth)
	}
	if depth+1 > MaxDepth {
		return d.syntax(&SyntaxError{d.pos, fmt.Sprintf("nesting deeper than %d", MaxDepth)})
	}
	d.pos++
	top := d.push(pathElem{index: -1})
	d.skipSpace()
	if d.peek() == '}' {
		d.pos++
		d.path = d.path[:top]
		return nil
	}
	for n := 0; ; n++ {
		if d.peek() != '"' {
			return d.syntax(&SyntaxError{d.pos, "expected a string key, got " + d.kindName()})
		}
		if n == MaxKeys {
			return d.syntax(&SyntaxError{d.pos, fmt.Sprintf("an object of more than %d members", MaxKeys)})
		}
		key, err := d.keyBytes()
		if err != nil {
			return err
		}
		d.path[top].key = key
		d.skipSpace()
		if d.peek() != ':' {
			return d.syntax(&SyntaxError{d.pos, "expected ':' after key"})
		}
		d.pos++
		d.skipSpace()
		if err := f(key); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			d.skipSpace()
			continue
		case '}':
			d.pos++
			d.path = d.path[:top]
			return nil
		}
		return d.syntax(&SyntaxError{d.pos, "expected ',' or '}' after object value"})
	}
}

// elements walks the array at the current position like members, calling
// f with each element's index.
func (d *decoder) elements(depth int, f func(i int) error) error {
	if d.peek() != '[' {
		return d.typeErr("array", depth)
	}
	if depth+1 > MaxDepth {
		return d.syntax(&SyntaxError{d.pos, fmt.Sprintf("nesting deeper than %d", MaxDepth)})
	}
	d.pos++
	top := d.push(pathElem{index: 0})
	d.skipSpace()
	if d.peek() == ']' {
		d.pos++
		d.path = d.path[:top]
		return nil
	}
	for i := 0; ; i++ {
		d.path[top].index = i
		if err := f(i); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			d.skipSpace()
			continue
		case ']':
			d.pos++
			d.path = d.path[:top]
			return nil
		}
		return d.syntax(&SyntaxError{d.pos, "expected ',' or ']' after array element"})
	}
}

func (d *decoder) object(v reflect.Value, open bool, depth int) error {
	if d.peek() != '{' {
		return d.typeErr("object", depth) // and no field is missing
	}
	si := d.info(v.Type())
	open = open || d.o.Open
	var seen uint64
	next := 0               // where the next key is looked for first
	var unknown *keySet     // taken at the first unknown key
	top := len(d.path) == 0 // the message itself, where Skip applies
	err := d.members(depth, func(key []byte) error {
		if top && d.o.Skip != "" && string(key) == d.o.Skip {
			if d.skipSeen {
				return d.failSkip(d.problem(ErrDuplicateKey, "duplicate key %s", QuoteKey(key)), depth+1)
			}
			d.skipSeen = true
			return d.skip(depth + 1)
		}
		i, ok := si.lookup(key, next)
		if !ok {
			if !open {
				return d.failSkip(d.problem(ErrUnknownField, "unknown field %s", QuoteKey(key)), depth+1)
			}
			if unknown == nil {
				unknown = d.keySet(depth)
			}
			if unknown.add(key) {
				return d.failSkip(d.problem(ErrDuplicateKey, "duplicate key %s", QuoteKey(key)), depth+1)
			}
			return d.skip(depth + 1)
		}
		if seen&(1<<i) != 0 {
			return d.failSkip(d.problem(ErrDuplicateKey, "duplicate key %s", QuoteKey(key)), depth+1)
		}
		seen |= 1 << i
		next = i + 1
		f := &si.fields[i]
		if err := d.value(v.Field(f.index), f.open, depth+1); err != nil {
			return err
		}
		if f.mustTrue && !v.Field(f.index).Bool() {
			return d.fail(d.problem(ErrNotTrue, "must be true when present"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, f := range si.fields {
		if f.required && seen&(1<<i) == 0 {
			e := d.problem(ErrMissing, "missing required field %q", f.name)
			e.Key = f.name
			if err := d.fail(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *decoder) mapValue(v reflect.Value, depth int) error {
	if v.Type().Key().Kind() != reflect.String {
		return d.problem(ErrType, "cannot decode into %s", v.Type())
	}
	m := reflect.MakeMap(v.Type())
	err := d.members(depth, func(key []byte) error {
		kv := reflect.ValueOf(string(key)).Convert(v.Type().Key())
		if m.MapIndex(kv).IsValid() {
			return d.failSkip(d.problem(ErrDuplicateKey, "duplicate key %s", QuoteKey(key)), depth+1)
		}
		ev := reflect.New(v.Type().Elem()).Elem()
		if err := d.value(ev, false, depth+1); err != nil {
			return err
		}
		m.SetMapIndex(kv, ev)
		return nil
	})
	if err != nil {
		return err
	}
	v.Set(m)
	return nil
}

var stringsType = reflect.TypeFor[[]string]()

func (d *decoder) slice(v reflect.Value, depth int) error {
	if v.Type() == stringsType {
		// The most common list, without reflection for each element.
		s := []string{}
		err := d.elements(depth, func(int) error {
			if d.peek() != '"' {
				s = append(s, "")
				return d.typeErr("string", depth+1)
			}
			x, err := d.str()
			s = append(s, x)
			return err
		})
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(s))
		return nil
	}
	s := reflect.MakeSlice(v.Type(), 0, 4)
	err := d.elements(depth, func(i int) error {
		s = reflect.Append(s, reflect.Zero(v.Type().Elem()))
		return d.value(s.Index(i), false, depth+1)
	})
	if err != nil {
		return err
	}
	v.Set(s)
	return nil
}

// anyValue decodes any JSON value into the types encoding/json uses for any:
// map[string]any, []any, string, float64, bool and nil.
func (d *decoder) anyValue(depth int) (any, error) {
	switch c := d.peek(); {
	case c == '{':
		m := map[string]any{}
		err := d.members(depth, func(key []byte) error {
			if _, dup := m[string(key)]; dup {
				return d.failSkip(d.problem(ErrDuplicateKey, "duplicate key %s", QuoteKey(key)), depth+1)
			}
			x, err := d.anyValue(depth + 1)
			m[string(key)] = x
			return err
		})
		return m, err
	case c == '[':
		a := []any{}
		err := d.elements(depth, func(int) error {
			x, err := d.anyValue(depth + 1)
			a = append(a, x)
			return err
		})
		return a, err
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		f, _, err := d.number()
		return f, err
	}
	return nil, d.syntax(&SyntaxError{d.pos, "expected a value, got " + d.kindName()})
}

// skip checks and skips one value inside depth containers without
// building it, by the Scanner's rules; a key given twice in it is a
// problem at its path.
func (d *decoder) skip(depth int) error {
	dups := d.sc.Duplicates()
	end, err := d.sc.Value(d.pos, depth)
	if err != nil {
		d.pos = end
		return d.asError(err)
	}
	d.pos = end
	if d.sc.Duplicates() > dups {
		return d.fail(d.problem(ErrDuplicateKey, "duplicate key %s", QuoteKey(d.sc.lastDup)))
	}
	return nil
}

func (d *decoder) literal(lit string) error {
	end, err := literal(d.data, d.pos, lit)
	if err != nil {
		return d.syntax(&SyntaxError{d.pos, "invalid literal, expected " + lit})
	}
	d.pos = end
	return nil
}

func (d *decoder) atNumber() bool {
	c := d.peek()
	return c == '-' || c >= '0' && c <= '9'
}

// number scans a number and reads it as a float64.
func (d *decoder) number() (float64, string, error) {
	lit, err := d.scanNumber()
	if err != nil {
		return 0, "", err
	}
	return d.parseNumber(lit)
}

// scanNumber moves past a number and returns its literal, checking only
// the grammar.
func (d *decoder) scanNumber() ([]byte, error) {
	start := d.pos
	end, err := scanNumber(d.data, d.pos)
	if err != nil {
		d.pos = end
		return nil, d.asError(err)
	}
	d.pos = end
	return d.data[start:end], nil
}

// parseNumber converts a scanned literal.
func (d *decoder) parseNumber(lit []byte) (float64, string, error) {
	// Fast path for small integers, the common case on these wires.
	if n := len(lit); n <= 15 {
		neg := lit[0] == '-'
		digits := lit
		if neg {
			digits = lit[1:]
		}
		var x int64
		ok := len(digits) > 0
		for _, c := range digits {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			x = x*10 + int64(c-'0')
		}
		if ok {
			if neg {
				x = -x
			}
			return float64(x), "", nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return 0, string(lit), d.fail(d.problem(ErrRange, "number %s out of range", cutLit(lit)))
	}
	return f, string(lit), nil
}

// keyBytes scans a JSON string used as a key. Without escapes it returns a
// slice of the input, so looking a key up costs no allocation.
func (d *decoder) keyBytes() ([]byte, error) {
	end, esc, err := scanString(d.data, d.pos, d.o.ReplaceLoneSurrogates)
	if err != nil {
		d.pos = end
		return nil, d.asError(err)
	}
	key := d.data[d.pos+1 : end-1]
	d.pos = end
	if esc {
		key = unescape(key)
	}
	return key, nil
}

// str scans a JSON string by the Scanner's rules and returns it unescaped.
func (d *decoder) str() (string, error) {
	key, err := d.keyBytes()
	return string(key), err
}

// cutLit is a number's text as an error shows it: its first 32 bytes, and
// how long it was past them. An error never grows with what it names.
func cutLit[S ~string | ~[]byte](lit S) string {
	if len(lit) <= 32 {
		return string(lit)
	}
	return fmt.Sprintf("%s… (%d bytes)", lit[:32], len(lit))
}
