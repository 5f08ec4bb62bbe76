package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds how deeply arrays and objects may nest, so that a hostile
// line cannot exhaust the stack of a recursive decoder.
const MaxDepth = 128

// A SyntaxError says why a text is not strict JSON and where.
type SyntaxError struct {
	Offset int // byte offset of the problem in the text
	Msg    string
}

// Error says where and why.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonrpc: invalid JSON at byte %d: %s", e.Offset, e.Msg)
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
	return fmt.Sprintf("jsonrpc: duplicate key %s at byte %d", quoteKey(e.Key), e.Offset)
}

// maxQuotedKey bounds what an error quotes of a key: an answer or a
// journal entry that repeats a key of a megabyte would be as large as the
// line that brought it.
const maxQuotedKey = 64

// quoteKey quotes key for an error, cut past maxQuotedKey bytes.
func quoteKey[S ~string | ~[]byte](key S) string {
	if len(key) <= maxQuotedKey {
		return strconv.Quote(string(key))
	}
	return strconv.Quote(string(key[:maxQuotedKey])) + fmt.Sprintf("… (%d bytes)", len(key))
}

// Validate reports whether data is exactly one strict JSON value, with
// optional surrounding whitespace. Strict means: valid UTF-8 everywhere,
// escapes that decode to valid UTF-8 (no lone surrogates), no member named
// twice in one object (compared after unescaping), and nesting no deeper
// than MaxDepth.
func Validate(data []byte) error {
	s := scanner{data: data}
	i, err := s.value(skipSpace(data, 0), 0)
	if err != nil {
		return err
	}
	if i = skipSpace(data, i); i != len(data) {
		return &SyntaxError{i, "text after the value"}
	}
	if s.dup != nil {
		return s.dup
	}
	return nil
}

// scanner validates JSON text. Syntax errors stop it; duplicate keys are
// recorded (the first one in dup) so that a batch can refuse only the message
// that holds one.
type scanner struct {
	data   []byte
	dup    *DuplicateKeyError
	dupAll []int // offsets of every duplicate, for batches
}

func skipSpace(data []byte, i int) int {
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

// value validates the value starting at i and returns the offset just past it.
func (s *scanner) value(i, depth int) (int, error) {
	if i >= len(s.data) {
		return i, &SyntaxError{i, "unexpected end of text"}
	}
	switch c := s.data[i]; c {
	case '{':
		return s.object(i, depth+1)
	case '[':
		return s.array(i, depth+1)
	case '"':
		end, _, err := scanString(s.data, i)
		return end, err
	case 't':
		return literal(s.data, i, "true")
	case 'f':
		return literal(s.data, i, "false")
	case 'n':
		return literal(s.data, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return scanNumber(s.data, i)
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
func (s *scanner) duplicate(i int, key []byte) {
	if s.dup == nil {
		s.dup = &DuplicateKeyError{Offset: i, Key: string(key)}
	}
	s.dupAll = append(s.dupAll, i)
}

func (s *scanner) object(i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, &SyntaxError{i, "nested too deeply"}
	}
	var keys keySet
	i = skipSpace(s.data, i+1)
	if i < len(s.data) && s.data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s.data) || s.data[i] != '"' {
			return i, &SyntaxError{i, "want a string key"}
		}
		if err := keys.count(i); err != nil {
			return i, err
		}
		end, esc, err := scanString(s.data, i)
		if err != nil {
			return end, err
		}
		key := s.data[i+1 : end-1]
		if esc {
			key = unescape(key)
		}
		if keys.add(key) {
			s.duplicate(i, key)
		}
		i = skipSpace(s.data, end)
		if i >= len(s.data) || s.data[i] != ':' {
			return i, &SyntaxError{i, "want ':' after a key"}
		}
		if i, err = s.value(skipSpace(s.data, i+1), depth); err != nil {
			return i, err
		}
		i = skipSpace(s.data, i)
		if i >= len(s.data) {
			return i, &SyntaxError{i, "unexpected end of text in an object"}
		}
		switch s.data[i] {
		case ',':
			i = skipSpace(s.data, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, &SyntaxError{i, "want ',' or '}' in an object"}
		}
	}
}

func (s *scanner) array(i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, &SyntaxError{i, "nested too deeply"}
	}
	i = skipSpace(s.data, i+1)
	if i < len(s.data) && s.data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = s.value(i, depth); err != nil {
			return i, err
		}
		i = skipSpace(s.data, i)
		if i >= len(s.data) {
			return i, &SyntaxError{i, "unexpected end of text in an array"}
		}
		switch s.data[i] {
		case ',':
			i = skipSpace(s.data, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, &SyntaxError{i, "want ',' or ']' in an array"}
		}
	}
}

// scanString validates the string starting at the quote at i. It returns the
// offset past the closing quote and whether the string holds escapes.
func scanString(data []byte, i int) (end int, escaped bool, err error) {
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
				n, err := scanEscape(data, i)
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
// surrogate: anything else does not decode to UTF-8.
func scanEscape(data []byte, i int) (int, error) {
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
			return i, &SyntaxError{i, "lone low surrogate"}
		case r >= 0xD800 && r <= 0xDBFF:
			if i+7 >= len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
				return i, &SyntaxError{i, "lone high surrogate"}
			}
			r2, ok := hex4(data, i+8)
			if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
				return i, &SyntaxError{i, "lone high surrogate"}
			}
			return i + 12, nil
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

// unescape decodes the escapes of a string's contents, already validated.
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
				r2, _ := hex4(s, i+2)
				r = utf16.DecodeRune(r, r2)
				i += 6
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
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errNotObject
	}
	i = skipSpace(data, i+1)
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
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return &SyntaxError{i, "want ':' after a key"}
		}
		v := skipSpace(data, i+1)
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
	i = skipSpace(data, i)
	switch {
	case i >= len(data):
		return i, false, &SyntaxError{i, "unexpected end of text in " + in}
	case data[i] == ',':
		return skipSpace(data, i+1), false, nil
	case data[i] == end:
		return i, true, nil
	}
	return i, false, &SyntaxError{i, "want ',' or '" + string(end) + "' in " + in}
}

// Elements calls fn with each element of the array data, as raw JSON, with
// its index. data must be valid JSON.
func Elements(data []byte, fn func(i int, value []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return errNotArray
	}
	i = skipSpace(data, i+1)
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
	i := skipSpace(data, 0)
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
	end, esc, err := scanString(data, 0)
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
