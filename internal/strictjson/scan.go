package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The rules of strict JSON, one set for every decoder of the module: the
// JSON-RPC lines of the plugin host (package jsonrpc), the ACI messages
// (package aci, through Unmarshal), the plugin protocol's params and the
// manifests (through Unmarshal too). A text is strict JSON when it is
// RFC 8259 JSON and also:
//
//   - valid UTF-8 everywhere, with no control character in a string;
//   - its escapes decode to valid UTF-8: a \u escape of a high surrogate
//     is followed by one of a low surrogate (a format that reads a lone
//     one as U+FFFD says so in its Options);
//   - no object names a member twice, keys compared after unescaping and
//     as written (case matters); the check is linear in the keys;
//   - no object holds more than MaxKeys members;
//   - arrays and objects nest at most MaxDepth deep.

// MaxDepth bounds how deeply arrays and objects may nest: an array or an
// object at the top is at depth 1, one inside it at depth 2, and a text
// whose containers reach depth MaxDepth+1 is refused, so that a hostile
// text cannot exhaust the stack of a recursive decoder. It is the one
// depth rule of every decoder of the module.
const MaxDepth = 128

// A SyntaxError says why a text is not strict JSON and where.
type SyntaxError struct {
	Offset int // byte offset of the problem in the text
	Msg    string
}

// Error says where and why.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("strictjson: invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// A DuplicateKeyError reports an object that names a member twice. The text
// is valid JSON, but two decoders may disagree on which value wins, which is
// how a method or a field gets smuggled past a check.
type DuplicateKeyError struct {
	Offset int    // byte offset of the second occurrence
	Key    string // the key, unescaped
}

// Error names the key and where it came again.
func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("strictjson: duplicate key %s at byte %d", QuoteKey(e.Key), e.Offset)
}

// maxQuotedKey bounds what an error quotes of a key: an answer or a
// journal entry that repeats a key of a megabyte would be as large as the
// line that brought it.
const maxQuotedKey = 64

// QuoteKey quotes key for an error, cut past its first 64 bytes.
func QuoteKey[S ~string | ~[]byte](key S) string {
	if len(key) <= maxQuotedKey {
		return strconv.Quote(string(key))
	}
	return strconv.Quote(string(key[:maxQuotedKey])) + fmt.Sprintf("… (%d bytes)", len(key))
}

// Validate reports whether data is exactly one strict JSON value, with
// optional surrounding whitespace: a *SyntaxError or a
// *DuplicateKeyError when it is not.
func Validate(data []byte) error {
	s := Scanner{Data: data}
	return s.Validate()
}

// A Scanner validates strict JSON text, Data, in one pass and may take an
// object apart as it goes (Object), which is how package jsonrpc reads a
// line once. Syntax errors stop it; duplicate keys are recorded (the
// first in Duplicate) so that a batch can refuse only the message that
// holds one.
type Scanner struct {
	Data []byte
	// ReplaceLoneSurrogates accepts a \u escape of a lone surrogate, read
	// as U+FFFD (see Options); by default it is a syntax error.
	ReplaceLoneSurrogates bool
	dup                   *DuplicateKeyError
	dups                  int
	lastDup               []byte // the last key found given twice
}

// Validate checks that Data is exactly one strict JSON value, with
// optional surrounding whitespace.
func (s *Scanner) Validate() error {
	i, err := s.Value(SkipSpace(s.Data, 0), 0)
	if err != nil {
		return err
	}
	if i = SkipSpace(s.Data, i); i != len(s.Data) {
		return &SyntaxError{i, "text after the value"}
	}
	if s.dup != nil {
		return s.dup
	}
	return nil
}

// Duplicates returns how many keys were found given twice so far.
func (s *Scanner) Duplicates() int { return s.dups }

// Duplicate returns the first key found given twice, or nil.
func (s *Scanner) Duplicate() *DuplicateKeyError { return s.dup }

// SkipSpace returns the offset of the first byte at or past i that is not
// JSON whitespace.
func SkipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Value validates the value starting at i, inside depth open arrays and
// objects, and returns the offset just past it.
func (s *Scanner) Value(i, depth int) (int, error) {
	if i >= len(s.Data) {
		return i, &SyntaxError{i, "unexpected end of text"}
	}
	switch c := s.Data[i]; c {
	case '{':
		return s.object(i, depth+1)
	case '[':
		return s.array(i, depth+1)
	case '"':
		end, _, err := scanString(s.Data, i, s.ReplaceLoneSurrogates)
		return end, err
	case 't':
		return literal(s.Data, i, "true")
	case 'f':
		return literal(s.Data, i, "false")
	case 'n':
		return literal(s.Data, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return scanNumber(s.Data, i)
		}
		return i, &SyntaxError{i, fmt.Sprintf("unexpected character %q", c)}
	}
}

func literal(data []byte, i int, lit string) (int, error) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, &SyntaxError{i, "invalid literal"}
	}
	return i + len(lit), nil
}

// smallObject is how many keys an object may hold before duplicates are
// looked up in a map rather than by comparing with each earlier key: the
// check stays linear in the number of keys.
const smallObject = 16

// MaxKeys bounds the members of one object. A map that grows past the
// caches costs some thirty times more a byte than the rest of a line, so
// that a line of one huge object would hold a core for a tenth of a second
// a megabyte; no message of the protocols carried here needs more.
const MaxKeys = 1024

// keySet is the keys of one object seen so far.
type keySet struct {
	small [smallObject][]byte
	n     int // keys seen, each once
	many  map[string]struct{}
}

// reset empties the set, holding nothing of the keys it had.
func (ks *keySet) reset() {
	clear(ks.small[:min(ks.n, smallObject)]) // n counts the keys in many too
	ks.n, ks.many = 0, nil
}

// add records key and reports whether it was there already.
func (ks *keySet) add(key []byte) bool {
	if ks.many == nil {
		for _, k := range ks.small[:ks.n] {
			if bytes.Equal(k, key) {
				return true
			}
		}
		if ks.n < smallObject {
			ks.small[ks.n] = key
			ks.n++
			return false
		}
		ks.many = make(map[string]struct{}, 4*smallObject)
		for _, k := range ks.small {
			ks.many[string(k)] = struct{}{}
		}
	} else if _, ok := ks.many[string(key)]; ok {
		return true
	}
	ks.many[string(key)] = struct{}{}
	ks.n++
	return false
}

// count refuses the member at i when the object already holds MaxKeys.
func (ks *keySet) count(i int) error {
	if ks.n >= MaxKeys {
		return &SyntaxError{i, fmt.Sprintf("an object of more than %d members", MaxKeys)}
	}
	return nil
}

// duplicate records a key given twice at offset i.
func (s *Scanner) duplicate(i int, key []byte) {
	if s.dup == nil {
		s.dup = &DuplicateKeyError{Offset: i, Key: string(key)}
	}
	s.dups++
	s.lastDup = key
}

// A Member is a key of an object, unescaped, and its raw value.
type Member struct{ Key, Value []byte }

// Object validates the object whose '{' is at i, itself at depth (1 at
// the top), appends its members to ms in order, and returns the offset
// past it. Duplicate keys, at any depth, are recorded as Value records
// them.
func (s *Scanner) Object(i, depth int, ms []Member) (int, []Member, error) {
	if depth > MaxDepth {
		return i, ms, &SyntaxError{i, "nested too deeply"}
	}
	return s.members(i, depth, ms)
}

// object validates the object at i, at depth, keeping nothing of it: the
// walk of Object without the members, the most common on every wire.
func (s *Scanner) object(i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, &SyntaxError{i, "nested too deeply"}
	}
	var keys keySet
	i = SkipSpace(s.Data, i+1)
	if i < len(s.Data) && s.Data[i] == '}' {
		return i + 1, nil
	}
	for {
		var err error
		if i, _, err = s.key(i, &keys); err != nil {
			return i, err
		}
		if i, err = s.Value(SkipSpace(s.Data, i), depth); err != nil {
			return i, err
		}
		i = SkipSpace(s.Data, i)
		if i >= len(s.Data) {
			return i, &SyntaxError{i, "unexpected end of text in an object"}
		}
		switch s.Data[i] {
		case ',':
			i = SkipSpace(s.Data, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, &SyntaxError{i, "want ',' or '}' in an object"}
		}
	}
}

// key reads the key of a member at i, records it in keys (a duplicate in
// the Scanner), and returns the offset past its colon and the key,
// unescaped.
func (s *Scanner) key(i int, keys *keySet) (int, []byte, error) {
	if i >= len(s.Data) || s.Data[i] != '"' {
		return i, nil, &SyntaxError{i, "want a string key"}
	}
	if err := keys.count(i); err != nil {
		return i, nil, err
	}
	end, esc, err := scanString(s.Data, i, s.ReplaceLoneSurrogates)
	if err != nil {
		return end, nil, err
	}
	key := s.Data[i+1 : end-1]
	if esc {
		key = unescape(key)
	}
	if keys.add(key) {
		s.duplicate(i, key)
	}
	i = SkipSpace(s.Data, end)
	if i >= len(s.Data) || s.Data[i] != ':' {
		return i, nil, &SyntaxError{i, "want ':' after a key"}
	}
	return i + 1, key, nil
}

// members reads the object at i, appending its members to ms.
func (s *Scanner) members(i, depth int, ms []Member) (int, []Member, error) {
	var keys keySet
	i = SkipSpace(s.Data, i+1)
	if i < len(s.Data) && s.Data[i] == '}' {
		return i + 1, ms, nil
	}
	for {
		var key []byte
		var err error
		if i, key, err = s.key(i, &keys); err != nil {
			return i, ms, err
		}
		v := SkipSpace(s.Data, i)
		if i, err = s.Value(v, depth); err != nil {
			return i, ms, err
		}
		ms = append(ms, Member{key, s.Data[v:i]})
		i = SkipSpace(s.Data, i)
		if i >= len(s.Data) {
			return i, ms, &SyntaxError{i, "unexpected end of text in an object"}
		}
		switch s.Data[i] {
		case ',':
			i = SkipSpace(s.Data, i+1)
		case '}':
			return i + 1, ms, nil
		default:
			return i, ms, &SyntaxError{i, "want ',' or '}' in an object"}
		}
	}
}

func (s *Scanner) array(i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, &SyntaxError{i, "nested too deeply"}
	}
	i = SkipSpace(s.Data, i+1)
	if i < len(s.Data) && s.Data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = s.Value(i, depth); err != nil {
			return i, err
		}
		i = SkipSpace(s.Data, i)
		if i >= len(s.Data) {
			return i, &SyntaxError{i, "unexpected end of text in an array"}
		}
		switch s.Data[i] {
		case ',':
			i = SkipSpace(s.Data, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, &SyntaxError{i, "want ',' or ']' in an array"}
		}
	}
}

// scanString validates the string starting at the quote at i. It returns the
// offset past the closing quote and whether the string holds escapes. A
// lone surrogate escape is refused unless lone.
func scanString(data []byte, i int, lone bool) (end int, escaped bool, err error) {
	start := i
	i++
	for i < len(data) {
		// Most of a string is plain ASCII: run over it with one table
		// lookup a byte.
		for i < len(data) && plain[data[i]] {
			i++
		}
		if i >= len(data) {
			break
		}
		c := data[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				return i + 1, escaped, nil
			case c == '\\':
				escaped = true
				n, err := scanEscape(data, i, lone)
				if err != nil {
					return n, escaped, err
				}
				i = n
			default: // c < 0x20
				return i, escaped, &SyntaxError{i, "control character in a string"}
			}
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i, escaped, &SyntaxError{i, "invalid UTF-8"}
		}
		i += size
	}
	return i, escaped, &SyntaxError{start, "unterminated string"}
}

// plain tells the bytes a string holds as they are: ASCII, neither a
// control character nor '"' nor '\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipString returns the offset past the string starting at the quote at
// i, in text already validated: it looks for the closing quote only.
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; ; {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data), &SyntaxError{i, "unterminated string"}
		}
		k += j
		n := 0 // backslashes before the quote: an odd count escapes it
		for k-1-n > i && data[k-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return k + 1, nil
		}
		j = k + 1
	}
}

// scanEscape validates the escape at i (a backslash) and returns the offset
// past it. A \u escape of a high surrogate must be followed by one of a low
// surrogate, and a low one must follow a high one: anything else does not
// decode to UTF-8, and is refused unless lone (then unescape reads it as
// U+FFFD).
func scanEscape(data []byte, i int, lone bool) (int, error) {
	if i+1 >= len(data) {
		return i, &SyntaxError{i, "unterminated escape"}
	}
	switch data[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, nil
	case 'u':
		r, ok := hex4(data, i+2)
		if !ok {
			return i, &SyntaxError{i, "invalid \\u escape"}
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			if lone {
				return i + 6, nil
			}
			return i, &SyntaxError{i, "lone low surrogate"}
		case r >= 0xD800 && r <= 0xDBFF:
			if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if r2, ok := hex4(data, i+8); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
					return i + 12, nil
				}
			}
			if lone {
				return i + 6, nil
			}
			return i, &SyntaxError{i, "lone high surrogate"}
		}
		return i + 6, nil
	}
	return i, &SyntaxError{i, "invalid escape"}
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func scanNumber(data []byte, i int) (int, error) {
	start := i
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return i, &SyntaxError{start, "invalid number"}
	}
	if i < len(data) && data[i] == '.' {
		i++
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, &SyntaxError{start, "invalid number"}
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, &SyntaxError{start, "invalid number"}
		}
	}
	return i, nil
}

// unescape decodes the escapes of a string's contents, already validated;
// a lone surrogate becomes U+FFFD.
func unescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return utf8.AppendRune(out, utf8.RuneError)
		}
		switch s[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(s, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				// A pair, or a lone surrogate that a lenient format let
				// through: U+FFFD, the next escape left to itself.
				r2, ok := rune(0), false
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s, i+2)
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, s[i+1])
		}
		i += 2
	}
	return out
}

// skipValue returns the offset past the value at i, trusting that the text
// was validated; on text that was not, it returns an error rather than
// panicking.
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return i, &SyntaxError{i, "unexpected end of text"}
	}
	switch c := data[i]; {
	case c == '"':
		return skipString(data, i)
	case c == '{' || c == '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, err := skipString(data, i)
				if err != nil {
					return end, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return i, &SyntaxError{i, "unexpected end of text"}
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(data, i)
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	}
	return i, &SyntaxError{i, "unexpected character"}
}

// errNotObject and its kin are what the value readers return for a value of
// the wrong kind; decoders wrap them with the field's path.
var (
	errNotObject = errors.New("want an object")
	errNotArray  = errors.New("want an array")
	errNotString = errors.New("want a string")
	errNotInt    = errors.New("want an integer")
	errNotNumber = errors.New("want a number")
	errNotBool   = errors.New("want a boolean")
)

// Members calls fn with each member of the object data, in order: the key
// unescaped, and the value as raw JSON. data must be valid JSON (Validate);
// duplicate keys are not looked for here. An error from fn stops the walk
// and is returned.
func Members(data []byte, fn func(key, value []byte) error) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errNotObject
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return &SyntaxError{i, "want a string key"}
		}
		end, err := skipString(data, i)
		if err != nil {
			return err
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = unescape(key)
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return &SyntaxError{i, "want ':' after a key"}
		}
		v := SkipSpace(data, i+1)
		if i, err = skipValue(data, v); err != nil {
			return err
		}
		if err := fn(key, data[v:i]); err != nil {
			return err
		}
		var done bool
		if i, done, err = afterItem(data, i, '}', "an object"); done || err != nil {
			return err
		}
	}
}

// afterItem reads what follows an item of an object or array closed by
// end: a comma (it returns the offset of the next item) or end (done).
func afterItem(data []byte, i int, end byte, in string) (int, bool, error) {
	i = SkipSpace(data, i)
	switch {
	case i >= len(data):
		return i, false, &SyntaxError{i, "unexpected end of text in " + in}
	case data[i] == ',':
		return SkipSpace(data, i+1), false, nil
	case data[i] == end:
		return i, true, nil
	}
	return i, false, &SyntaxError{i, "want ',' or '" + string(end) + "' in " + in}
}

// Elements calls fn with each element of the array data, as raw JSON, with
// its index. data must be valid JSON.
func Elements(data []byte, fn func(i int, value []byte) error) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return errNotArray
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil
	}
	for n := 0; ; n++ {
		v := i
		var err error
		if i, err = skipValue(data, v); err != nil {
			return err
		}
		if err := fn(n, data[v:i]); err != nil {
			return err
		}
		var done bool
		if i, done, err = afterItem(data, i, ']', "an array"); done || err != nil {
			return err
		}
	}
}

// A Kind is the kind of a JSON value, told by its first byte.
type Kind byte

// Kinds of JSON values.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// KindOf tells the kind of the raw value data.
func KindOf(data []byte) Kind {
	i := SkipSpace(data, 0)
	if i >= len(data) {
		return KindInvalid
	}
	switch c := data[i]; {
	case c == 'n':
		return KindNull
	case c == 't' || c == 'f':
		return KindBool
	case c == '"':
		return KindString
	case c == '[':
		return KindArray
	case c == '{':
		return KindObject
	case c == '-' || (c >= '0' && c <= '9'):
		return KindNumber
	}
	return KindInvalid
}

// String decodes the raw JSON string data.
func String(data []byte) (string, error) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return "", errNotString
	}
	end, esc, err := scanString(data, 0, false)
	if err != nil {
		return "", err
	}
	if end != len(data) {
		return "", errNotString
	}
	if esc {
		return string(unescape(data[1 : len(data)-1])), nil
	}
	return string(data[1 : len(data)-1]), nil
}

// Int decodes the raw JSON number data as an integer. A fraction or an
// exponent is refused, even 1.0: the protocol's integers are written as such.
func Int(data []byte) (int64, error) {
	if len(data) == 0 || len(data) > 20 {
		return 0, errNotInt
	}
	neg := data[0] == '-'
	digits := data
	if neg {
		digits = data[1:]
	}
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return 0, errNotInt
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, errNotInt
		}
		n = n*10 + uint64(c-'0')
		if n > math.MaxInt64+1 {
			return 0, errNotInt
		}
	}
	switch {
	case neg && n == math.MaxInt64+1:
		return math.MinInt64, nil
	case n > math.MaxInt64:
		return 0, errNotInt
	case neg:
		return -int64(n), nil
	}
	return int64(n), nil
}

// Number decodes the raw JSON number data.
func Number(data []byte) (float64, error) {
	if KindOf(data) != KindNumber {
		return 0, errNotNumber
	}
	if end, err := scanNumber(data, 0); err != nil || end != len(data) {
		return 0, errNotNumber
	}
	return strconv.ParseFloat(string(data), 64)
}

// Bool decodes the raw JSON boolean data.
func Bool(data []byte) (bool, error) {
	switch string(data) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errNotBool
}

// AppendString appends s to dst as a JSON string. Invalid UTF-8 in s is
// replaced by U+FFFD so that the output is always strict JSON.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				const hex = "0123456789abcdef"
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
