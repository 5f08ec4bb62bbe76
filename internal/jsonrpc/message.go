package jsonrpc

import (
	"fmt"
	"strconv"
)

// MessageKind says what a message is.
type MessageKind uint8

// Message kinds.
const (
	KindRequest      MessageKind = iota + 1 // a method with an id: answer it
	KindNotification                        // a method without an id: no answer
	KindResponse                            // a result or an error for an id
)

// A Message is one decoded JSON-RPC 2.0 message. Its byte slices point into
// the line it was parsed from.
type Message struct {
	Kind   MessageKind
	ID     []byte // raw JSON id (number, string or null); nil when absent
	Method string
	Params []byte // raw JSON object or array; nil when absent
	Result []byte // raw JSON; set for a response without an error
	Error  *Error // set for an error response
}

// An Item is one message of a parsed line. When Err is set the message is
// not valid JSON-RPC: answer Err to ID (null when no id could be read).
type Item struct {
	Message
	Err *Error
}

var nullID = []byte("null")

// Parse decodes a line holding one message or a batch. When the line as a
// whole must be refused, Parse returns an *Error (CodeParse for a line that
// is not strict JSON, CodeInvalidRequest for JSON that is neither an object
// nor a non-empty array) to answer once, with a null id. Otherwise it appends
// one Item per message to items and reports whether the line was a batch.
func Parse(line []byte, items []Item) (_ []Item, batch bool, _ *Error) {
	s := scanner{data: line}
	start := skipSpace(line, 0)
	end, err := s.value(start, 0)
	if err == nil {
		if i := skipSpace(line, end); i != len(line) {
			err = &SyntaxError{i, "text after the value"}
		}
	}
	if err != nil {
		return items, false, &Error{Code: CodeParse, Message: "parse error: " + err.Error()}
	}
	switch line[start] {
	case '{':
		items = append(items, parseMessage(line[start:end], s.dup != nil))
		return items, false, nil
	case '[':
		n := len(items)
		Elements(line[start:end], func(_ int, v []byte) error {
			off := cap(line) - cap(v) // v's offset in line
			items = append(items, parseMessage(v, hasDup(s.dupAll, off, off+len(v))))
			return nil
		})
		if len(items) == n {
			return items, true, &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}
		}
		return items, true, nil
	}
	return items, false, &Error{Code: CodeInvalidRequest, Message: "invalid request: not an object"}
}

func hasDup(offsets []int, from, to int) bool {
	for _, o := range offsets {
		if o >= from && o < to {
			return true
		}
	}
	return false
}

// parseMessage decodes one message, already validated as JSON.
func parseMessage(raw []byte, dup bool) Item {
	var it Item
	if KindOf(raw) != KindObject {
		it.Err = &Error{Code: CodeInvalidRequest, Message: "invalid request: not an object"}
		return it
	}
	var hasVersion, hasMethod, hasResult, hasError bool
	var bad *Error
	refuse := func(e *Error) {
		if bad == nil {
			bad = e
		}
	}
	// Every member is read, even after a bad one, to learn whether the
	// message is a request whose id may be echoed.
	Members(raw, func(k, v []byte) error {
		switch string(k) {
		case "jsonrpc":
			if s, err := String(v); err != nil || s != "2.0" {
				refuse(invalid(`"jsonrpc" must be "2.0"`))
			}
			hasVersion = true
		case "id":
			switch KindOf(v) {
			case KindString, KindNumber, KindNull:
				it.ID = v
			default:
				refuse(invalid(`"id" must be a string, a number or null`))
			}
		case "method":
			s, err := String(v)
			if err != nil || s == "" {
				refuse(invalid(`"method" must be a non-empty string`))
			}
			it.Method, hasMethod = s, true
		case "params":
			if k := KindOf(v); k != KindObject && k != KindArray {
				refuse(invalid(`"params" must be an object or an array`))
			}
			it.Params = v
		case "result":
			it.Result, hasResult = v, true
		case "error":
			e, err := parseError(v)
			if err != nil {
				refuse(err)
			}
			it.Error, hasError = e, true
		default:
			refuse(invalid(fmt.Sprintf("unknown member %q", k)))
		}
		return nil
	})
	switch {
	case bad != nil:
	case dup:
		bad = invalid("a key appears twice")
	case !hasVersion:
		bad = invalid(`"jsonrpc" is missing`)
	case hasMethod && (hasResult || hasError):
		bad = invalid("a message is a request or a response, not both")
	case hasMethod && it.ID != nil:
		it.Kind = KindRequest
	case hasMethod:
		it.Kind = KindNotification
	case hasResult && hasError:
		bad = invalid(`a response holds "result" or "error", not both`)
	case !hasResult && !hasError:
		bad = invalid(`neither "method" nor "result" nor "error"`)
	case it.Params != nil:
		bad = invalid(`a response has no "params"`)
	case it.ID == nil:
		bad = invalid(`a response needs an "id"`)
	default:
		it.Kind = KindResponse
	}
	if bad != nil {
		// An id is echoed only from a request that names it once: a broken
		// response answered with its own id would land on one of the other
		// side's calls.
		if dup || !hasMethod {
			it.ID = nil
		}
		it.Kind, it.Err = 0, bad
	}
	return it
}

func invalid(why string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "invalid request: " + why}
}

func parseError(raw []byte) (*Error, *Error) {
	if KindOf(raw) != KindObject {
		return nil, invalid(`"error" must be an object`)
	}
	e := new(Error)
	var hasCode, hasMessage bool
	var bad *Error
	Members(raw, func(k, v []byte) error {
		switch string(k) {
		case "code":
			n, err := Int(v)
			if err != nil {
				bad = invalid(`"error.code" must be an integer`)
			}
			e.Code, hasCode = n, true
		case "message":
			s, err := String(v)
			if err != nil {
				bad = invalid(`"error.message" must be a string`)
			}
			e.Message, hasMessage = s, true
		case "data":
			e.Data = v
		default:
			bad = invalid(fmt.Sprintf("unknown member %q in error", k))
		}
		if bad != nil {
			return bad
		}
		return nil
	})
	switch {
	case bad != nil:
		return nil, bad
	case !hasCode || !hasMessage:
		return nil, invalid(`"error" needs "code" and "message"`)
	}
	return e, nil
}

// AppendRequest appends a request line (without its newline). params is raw
// JSON, an object or an array; nil leaves "params" out.
func AppendRequest(dst []byte, id int64, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendNotification appends a notification line (without its newline).
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendResult appends a response carrying result (raw JSON; nil is null).
func AppendResult(dst, id, result []byte) []byte {
	if id == nil {
		id = nullID
	}
	if result == nil {
		result = nullID
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends an error response; a nil id is written null.
func AppendError(dst, id []byte, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, e.Code, 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, e.Message)
	if e.Data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, `}}`...)
}
