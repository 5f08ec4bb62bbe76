package jsonrpc

import (
	"fmt"
	"strconv"

	"shinken.dev/go/internal/strictjson"
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

// MaxBatch bounds the messages of one batch. A batch is answered in one
// line that the Conn holds until its last answer is in, and each message
// of a batch may be answered with an error of its own, so that a line of
// tiny items ([1,1,1,…]) would otherwise make an answer a hundred times its
// size. A longer batch is refused whole, with one error, before any of its
// messages is handled; Conn.Batch splits longer lists of calls.
const MaxBatch = 256

// MaxBatchAnswer bounds the bytes of a batch's answer line. An answer that
// would take the line past it is replaced by an error saying so, for that
// call alone (CodeInternal, "answer too large for a batch: call it alone").
const MaxBatchAnswer = 8 << 20

var errBatchTooLong = &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: a batch of more than %d messages", MaxBatch)}

// Parse decodes a line holding one message or a batch. When the line as a
// whole must be refused, Parse returns an *Error (CodeParse for a line that
// is not strict JSON, CodeInvalidRequest for JSON that is neither an object
// nor a non-empty array, or for a batch of more than MaxBatch messages) to
// answer once, with a null id. Otherwise it appends
// one Item per message to items and reports whether the line was a batch.
// The line is read once: validated and taken apart in the same pass.
func Parse(line []byte, items []Item) (_ []Item, batch bool, _ *Error) {
	s := strictjson.Scanner{Data: line}
	n0 := len(items)
	var buf [8]strictjson.Member
	i := strictjson.SkipSpace(line, 0)
	var err error
	notObject := false
	switch {
	case i < len(line) && line[i] == '{':
		var ms []strictjson.Member
		i, ms, err = s.Object(i, 1, buf[:0])
		if err == nil {
			items = append(items, parseMessage(ms, s.Duplicates() > 0))
		}
	case i < len(line) && line[i] == '[':
		batch = true
		i = strictjson.SkipSpace(line, i+1)
		if i < len(line) && line[i] == ']' {
			i++
			break
		}
		for {
			if len(items)-n0 == MaxBatch {
				e := *errBatchTooLong
				return items[:n0], false, &e
			}
			if i < len(line) && line[i] == '{' {
				dups := s.Duplicates()
				var ms []strictjson.Member
				if i, ms, err = s.Object(i, 1, buf[:0]); err != nil {
					break
				}
				items = append(items, parseMessage(ms, s.Duplicates() > dups))
			} else {
				if i, err = s.Value(i, 1); err != nil {
					break
				}
				items = append(items, Item{Err: invalid("not an object")})
			}
			i = strictjson.SkipSpace(line, i)
			if i < len(line) && line[i] == ',' {
				i = strictjson.SkipSpace(line, i+1)
				continue
			}
			if i < len(line) && line[i] == ']' {
				i++
			} else {
				err = &strictjson.SyntaxError{Offset: i, Msg: "want ',' or ']' in an array"}
			}
			break
		}
	default:
		i, err = s.Value(i, 0)
		notObject = err == nil
	}
	if err == nil && !notObject {
		if j := strictjson.SkipSpace(line, i); j != len(line) {
			err = &strictjson.SyntaxError{Offset: j, Msg: "text after the value"}
		}
	}
	switch {
	case notObject:
		return items[:n0], false, &Error{Code: CodeInvalidRequest, Message: "invalid request: not an object"}
	case err != nil:
		return items[:n0], false, &Error{Code: CodeParse, Message: "parse error: " + err.Error()}
	case batch && len(items) == n0:
		return items, true, &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}
	}
	return items, batch, nil
}

// parseMessage makes a message of an object's members.
func parseMessage(ms []strictjson.Member, dup bool) Item {
	var it Item
	var hasVersion, hasMethod, hasResult, hasError bool
	var bad *Error
	refuse := func(e *Error) {
		if bad == nil {
			bad = e
		}
	}
	// Every member is read, even after a bad one, to learn whether the
	// message is a request whose id may be echoed.
	for _, m := range ms {
		k, v := m.Key, m.Value
		switch string(k) {
		case "jsonrpc":
			if string(v) != `"2.0"` {
				if s, err := strictjson.String(v); err != nil || s != "2.0" {
					refuse(invalid(`"jsonrpc" must be "2.0"`))
				}
			}
			hasVersion = true
		case "id":
			switch strictjson.KindOf(v) {
			case strictjson.KindString, strictjson.KindNumber, strictjson.KindNull:
				it.ID = v
			default:
				refuse(invalid(`"id" must be a string, a number or null`))
			}
		case "method":
			s, err := strictjson.String(v)
			if err != nil || s == "" {
				refuse(invalid(`"method" must be a non-empty string`))
			}
			it.Method, hasMethod = s, true
		case "params":
			if k := strictjson.KindOf(v); k != strictjson.KindObject && k != strictjson.KindArray {
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
			refuse(invalid("unknown member " + strictjson.QuoteKey(k)))
		}
	}
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
	if strictjson.KindOf(raw) != strictjson.KindObject {
		return nil, invalid(`"error" must be an object`)
	}
	e := new(Error)
	var hasCode, hasMessage bool
	var bad *Error
	strictjson.Members(raw, func(k, v []byte) error {
		switch string(k) {
		case "code":
			n, err := strictjson.Int(v)
			if err != nil {
				bad = invalid(`"error.code" must be an integer`)
			}
			e.Code, hasCode = n, true
		case "message":
			s, err := strictjson.String(v)
			if err != nil {
				bad = invalid(`"error.message" must be a string`)
			}
			e.Message, hasMessage = s, true
		case "data":
			e.Data = v
		default:
			bad = invalid("unknown member " + strictjson.QuoteKey(k) + " in error")
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
	dst = strictjson.AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendNotification appends a notification line (without its newline).
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = strictjson.AppendString(dst, method)
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
	dst = strictjson.AppendString(dst, e.Message)
	if e.Data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, `}}`...)
}
