// Package strictjson decodes JSON into Go structs the way a strict wire
// protocol wants it: unknown fields are errors (unless the field is tagged
// open), duplicate keys are errors, keys match case-sensitively, required
// fields are checked by presence, and every error names the JSON path of the
// offending value.
//
// Struct fields use the json tag's name. A second tag, wire, holds the
// options encoding/json has no word for: "required" (the key must be
// present, even if its value is null), "open" (the nested object may carry
// keys the struct does not know; they are skipped) and "true" (a bool that,
// when present, must be true).
package strictjson

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// An Error is a decoding error at a JSON path such as "$.action.target.x".
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

// MaxDepth bounds the nesting of arrays and objects.
const MaxDepth = 64

// Unmarshal decodes data into v, which must be a non-nil pointer.
func Unmarshal(data []byte, v any) error {
	return UnmarshalSkipping(data, v, "")
}

// UnmarshalSkipping is Unmarshal, except that a top-level key named skip is
// accepted and its value skipped: the discriminator a caller already read.
func UnmarshalSkipping(data []byte, v any, skip string) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &Error{Path: "$", Msg: "decode target must be a non-nil pointer"}
	}
	d := decoder{data: data, skip: skip}
	d.path = d.pathBuf[:0]
	d.skipSpace()
	if err := d.value(rv.Elem(), false, 0); err != nil {
		return err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.errf("unexpected data after the top-level value")
	}
	return nil
}

// Valid reports whether data is one well-formed JSON value without duplicate
// keys, and returns a path-naming error if not.
func Valid(data []byte) error {
	var v any
	return Unmarshal(data, &v)
}

type decoder struct {
	data     []byte
	pos      int
	path     []pathElem
	skip     string // a top-level key to skip
	skipSeen bool
	pathBuf  [16]pathElem
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
			b.Write(p.key)
		}
	}
	return b.String()
}

func (d *decoder) errf(format string, args ...any) *Error {
	return &Error{Path: d.pathString(), Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

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

func (d *decoder) typeErr(want string) *Error {
	return d.errf("expected %s, got %s", want, d.kindName())
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
	byName map[string]int // name -> position in fields
}

var structCache sync.Map // reflect.Type -> *structInfo

func infoFor(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byName: map[string]int{}}
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
		si.byName[name] = len(si.fields)
		si.fields = append(si.fields, fi)
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

// TopString returns the string value of key in the top-level object of data,
// skipping everything else without building it. It reports false when data
// is not an object, key is absent, or its value is not a string.
func TopString(data []byte, key string) (string, bool) {
	var d decoder
	if !d.seekTop(data, key) || d.peek() != '"' {
		return "", false
	}
	s, err := d.str()
	return s, err == nil
}

// TopRaw returns the raw bytes of the value of key in the top-level object
// of data, checked for syntax only, like TopString.
func TopRaw(data []byte, key string) ([]byte, bool) {
	var d decoder
	if !d.seekTop(data, key) {
		return nil, false
	}
	start := d.pos
	if !d.skipLoose() {
		return nil, false
	}
	return data[start:d.pos], true
}

// seekTop positions d at the value of key in the top-level object of data.
// Keys match exactly (case-sensitively); the first occurrence wins.
func (d *decoder) seekTop(data []byte, key string) bool {
	d.data = data
	d.skipSpace()
	if d.peek() != '{' {
		return false
	}
	d.pos++
	d.skipSpace()
	if d.peek() == '}' {
		return false
	}
	for {
		if d.peek() != '"' {
			return false
		}
		k, err := d.keyBytes()
		if err != nil {
			return false
		}
		d.skipSpace()
		if d.peek() != ':' {
			return false
		}
		d.pos++
		d.skipSpace()
		if string(k) == key {
			return true
		}
		if !d.skipLoose() {
			return false
		}
		d.skipSpace()
		if d.peek() != ',' {
			return false
		}
		d.pos++
		d.skipSpace()
	}
}

func (d *decoder) value(v reflect.Value, open bool, depth int) error {
	if depth > MaxDepth {
		return d.errf("nesting deeper than %d", MaxDepth)
	}
	if d.peek() == 'n' {
		if err := d.literal("null"); err != nil {
			return err
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
			v.SetZero()
			return nil
		}
		d.pos -= 4
		return d.typeErr(jsonKindOf(v.Type()))
	}
	if v.Type() == rawType {
		start := d.pos
		if _, err := d.anyValue(depth); err != nil {
			return err
		}
		v.SetBytes(append([]byte(nil), d.data[start:d.pos]...))
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(v.Elem(), open, depth)
	case reflect.Interface:
		if v.Type() != anyType {
			return d.errf("cannot decode into %s", v.Type())
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
		return d.slice(v, depth)
	case reflect.String:
		if d.peek() != '"' {
			return d.typeErr("string")
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
		return d.typeErr("boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !d.atNumber() {
			return d.typeErr("integer")
		}
		f, lit, err := d.number()
		if err != nil {
			return err
		}
		if f != math.Trunc(f) {
			return d.errf("expected integer, got %s", lit)
		}
		// An integer past the field's range saturates at its bound: the
		// schema sets no maximum, and every such field here is a size, a
		// duration or an id, for which the bound means "as much as there
		// is" or "no such thing". Past 2^53 digits are lost, as in any
		// I-JSON reader.
		bits := v.Type().Bits()
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
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !d.atNumber() {
			return d.typeErr("integer")
		}
		f, lit, err := d.number()
		if err != nil {
			return err
		}
		if f != math.Trunc(f) {
			return d.errf("expected integer, got %s", lit)
		}
		if f < 0 {
			return d.errf("expected a non-negative integer, got %s", lit)
		}
		bits := v.Type().Bits()
		if hi := math.Ldexp(1, bits); f >= hi {
			v.SetUint(math.MaxUint64 >> (64 - bits))
		} else {
			v.SetUint(uint64(f))
		}
		return nil
	case reflect.Float32, reflect.Float64:
		f, _, err := d.number()
		if err != nil {
			return err
		}
		v.SetFloat(f)
		return nil
	}
	return d.errf("cannot decode into %s", v.Type())
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
	}
	return "integer"
}

// members walks the object at the current position: for each member it
// reads the key, sets it as the last element of the path, and calls f with
// the decoder at the member's value, which f must consume. The path is
// restored when the object ends well.
func (d *decoder) members(f func(key []byte) error) error {
	if d.peek() != '{' {
		return d.typeErr("object")
	}
	d.pos++
	d.path = append(d.path, pathElem{index: -1})
	top := len(d.path) - 1
	d.skipSpace()
	if d.peek() == '}' {
		d.pos++
		d.path = d.path[:top]
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.errf("expected a string key, got %s", d.kindName())
		}
		key, err := d.keyBytes()
		if err != nil {
			return err
		}
		d.path[top].key = key
		d.skipSpace()
		if d.peek() != ':' {
			return d.errf("expected ':' after key")
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
		return d.errf("expected ',' or '}' after object value")
	}
}

// elements walks the array at the current position like members, calling
// f with each element's index.
func (d *decoder) elements(f func(i int) error) error {
	if d.peek() != '[' {
		return d.typeErr("array")
	}
	d.pos++
	d.path = append(d.path, pathElem{index: 0})
	top := len(d.path) - 1
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
		return d.errf("expected ',' or ']' after array element")
	}
}

func (d *decoder) object(v reflect.Value, open bool, depth int) error {
	si := infoFor(v.Type())
	var seen uint64
	var unknown map[string]bool
	top := len(d.path) == 0 // the message itself, where d.skip applies
	err := d.members(func(key []byte) error {
		if top && d.skip != "" && string(key) == d.skip {
			if d.skipSeen {
				return d.errf("duplicate key %q", key)
			}
			d.skipSeen = true
			return d.skipValue(depth + 1)
		}
		i, ok := si.byName[string(key)]
		if !ok {
			if !open {
				return d.errf("unknown field %q", key)
			}
			if unknown[string(key)] {
				return d.errf("duplicate key %q", key)
			}
			if unknown == nil {
				unknown = map[string]bool{}
			}
			unknown[string(key)] = true
			return d.skipValue(depth + 1)
		}
		if seen&(1<<i) != 0 {
			return d.errf("duplicate key %q", key)
		}
		seen |= 1 << i
		f := si.fields[i]
		if err := d.value(v.Field(f.index), f.open, depth+1); err != nil {
			return err
		}
		if f.mustTrue && !v.Field(f.index).Bool() {
			return d.errf("must be true when present")
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, f := range si.fields {
		if f.required && seen&(1<<i) == 0 {
			return d.errf("missing required field %q", f.name)
		}
	}
	return nil
}

func (d *decoder) mapValue(v reflect.Value, depth int) error {
	if v.Type().Key().Kind() != reflect.String {
		return d.errf("cannot decode into %s", v.Type())
	}
	m := reflect.MakeMap(v.Type())
	err := d.members(func(key []byte) error {
		kv := reflect.ValueOf(string(key)).Convert(v.Type().Key())
		if m.MapIndex(kv).IsValid() {
			return d.errf("duplicate key %q", key)
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

func (d *decoder) slice(v reflect.Value, depth int) error {
	s := reflect.MakeSlice(v.Type(), 0, 4)
	err := d.elements(func(i int) error {
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
	if depth > MaxDepth {
		return nil, d.errf("nesting deeper than %d", MaxDepth)
	}
	switch c := d.peek(); {
	case c == '{':
		m := map[string]any{}
		err := d.members(func(key []byte) error {
			if _, dup := m[string(key)]; dup {
				return d.errf("duplicate key %q", key)
			}
			x, err := d.anyValue(depth + 1)
			m[string(key)] = x
			return err
		})
		return m, err
	case c == '[':
		a := []any{}
		err := d.elements(func(int) error {
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
	return nil, d.errf("expected a value, got %s", d.kindName())
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.errf("invalid literal, expected %s", lit)
	}
	d.pos += len(lit)
	return nil
}

func (d *decoder) atNumber() bool {
	c := d.peek()
	return c == '-' || c >= '0' && c <= '9'
}

// number scans a JSON number per RFC 8259's grammar.
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
	p := d.pos
	if p < len(d.data) && d.data[p] == '-' {
		p++
	}
	switch {
	case p < len(d.data) && d.data[p] == '0':
		p++
	case p < len(d.data) && d.data[p] >= '1' && d.data[p] <= '9':
		for p < len(d.data) && d.data[p] >= '0' && d.data[p] <= '9' {
			p++
		}
	default:
		return nil, d.typeErr("number")
	}
	if p < len(d.data) && d.data[p] == '.' {
		p++
		q := p
		for p < len(d.data) && d.data[p] >= '0' && d.data[p] <= '9' {
			p++
		}
		if p == q {
			d.pos = p
			return nil, d.errf("invalid number: no digits after '.'")
		}
	}
	if p < len(d.data) && (d.data[p] == 'e' || d.data[p] == 'E') {
		p++
		if p < len(d.data) && (d.data[p] == '+' || d.data[p] == '-') {
			p++
		}
		q := p
		for p < len(d.data) && d.data[p] >= '0' && d.data[p] <= '9' {
			p++
		}
		if p == q {
			d.pos = p
			return nil, d.errf("invalid number: no digits in exponent")
		}
	}
	d.pos = p
	return d.data[start:p], nil
}

// parseNumber converts a scanned literal.
func (d *decoder) parseNumber(lit []byte) (float64, string, error) {
	// Fast path for small integers, the common case on this wire.
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
		return 0, string(lit), d.errf("number %s out of range", lit)
	}
	return f, string(lit), nil
}

// keyBytes scans a JSON string used as a key. Without escapes it returns a
// slice of the input, so looking a key up costs no allocation.
func (d *decoder) keyBytes() ([]byte, error) {
	start := d.pos + 1
	for p := start; p < len(d.data); p++ {
		c := d.data[p]
		if c == '"' {
			if !utf8.Valid(d.data[start:p]) {
				d.pos = p
				return nil, d.errf("key is not valid UTF-8")
			}
			d.pos = p + 1
			return d.data[start:p], nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	s, err := d.str()
	return []byte(s), err
}

// skipValue checks and skips one value without building it.
func (d *decoder) skipValue(depth int) error {
	if depth > MaxDepth {
		return d.errf("nesting deeper than %d", MaxDepth)
	}
	switch c := d.peek(); {
	case c == '"':
		_, err := d.keyBytes()
		return err
	case c == '{' || c == '[':
		_, err := d.anyValue(depth)
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	default:
		_, _, err := d.number()
		return err
	}
}

// skipLoose skips one value checking only its syntax: no depth limit (it
// keeps its own stack of open containers instead of recursing), no check of
// duplicate keys. TopString uses it, so that a message whose other fields
// are deeply nested or repeat a key still yields its call_id, and gets an
// answer in-band.
func (d *decoder) skipLoose() bool {
	var open []byte // the closing bracket of each open container
	for {
		d.skipSpace()
		// A value.
		switch c := d.peek(); {
		case c == '{' || c == '[':
			d.pos++
			d.skipSpace()
			closing := byte('}')
			if c == '[' {
				closing = ']'
			}
			if d.peek() == closing {
				d.pos++
				break
			}
			open = append(open, closing)
			if closing == '}' {
				if !d.looseKey() {
					return false
				}
			}
			continue
		case c == '"':
			if _, err := d.keyBytes(); err != nil {
				return false
			}
		case c == 't':
			if d.literal("true") != nil {
				return false
			}
		case c == 'f':
			if d.literal("false") != nil {
				return false
			}
		case c == 'n':
			if d.literal("null") != nil {
				return false
			}
		default:
			if _, err := d.scanNumber(); err != nil {
				return false
			}
		}
		// After a value: close containers, or go on to the next member.
		for {
			if len(open) == 0 {
				return true
			}
			d.skipSpace()
			top := open[len(open)-1]
			switch d.peek() {
			case ',':
				d.pos++
				if top == '}' && !d.looseKey() {
					return false
				}
			case top:
				d.pos++
				open = open[:len(open)-1]
				continue
			default:
				return false
			}
			break
		}
	}
}

// looseKey reads `"key":` inside an object being skipped.
func (d *decoder) looseKey() bool {
	d.skipSpace()
	if d.peek() != '"' {
		return false
	}
	if _, err := d.keyBytes(); err != nil {
		return false
	}
	d.skipSpace()
	if d.peek() != ':' {
		return false
	}
	d.pos++
	return true
}

// str scans a JSON string, checking escapes and UTF-8.
func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes, all ASCII or valid UTF-8.
	for p := start; p < len(d.data); p++ {
		c := d.data[p]
		if c == '"' {
			raw := d.data[start:p]
			if !utf8.Valid(raw) {
				return "", d.errf("string is not valid UTF-8")
			}
			d.pos = p + 1
			return string(raw), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			d.pos = p
			return "", d.errf("control character in string")
		}
	}
	var b []byte
	p := start
	for {
		if p >= len(d.data) {
			d.pos = p
			return "", d.errf("unterminated string")
		}
		c := d.data[p]
		switch {
		case c == '"':
			if !utf8.Valid(b) {
				return "", d.errf("string is not valid UTF-8")
			}
			d.pos = p + 1
			return string(b), nil
		case c < 0x20:
			d.pos = p
			return "", d.errf("control character in string")
		case c != '\\':
			b = append(b, c)
			p++
			continue
		}
		p++
		if p >= len(d.data) {
			d.pos = p
			return "", d.errf("unterminated string")
		}
		switch d.data[p] {
		case '"', '\\', '/':
			b = append(b, d.data[p])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n, ok := hex4(d.data[p+1:])
			if !ok {
				d.pos = p
				return "", d.errf("invalid \\u escape")
			}
			p += n
			if utf16.IsSurrogate(r) {
				r2, n2, ok2 := rune(0), 0, false
				if p+2 < len(d.data) && d.data[p+1] == '\\' && d.data[p+2] == 'u' {
					r2, n2, ok2 = hex4(d.data[p+3:])
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					p += 2 + n2
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			d.pos = p
			return "", d.errf("invalid escape '\\%c'", d.data[p])
		}
		p++
	}
}

func hex4(b []byte) (rune, int, bool) {
	if len(b) < 4 {
		return 0, 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, 0, false
		}
	}
	return r, 4, true
}
