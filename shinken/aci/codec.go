package aci

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"shinken.dev/go/internal/strictjson"
)

// Marshal encodes m as one text message, "type" first.
func Marshal(m Message) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return spliceType(m.MessageType(), body), nil
}

func spliceType(typ string, body []byte) []byte {
	out := make([]byte, 0, len(body)+len(typ)+11)
	out = append(out, `{"type":"`...)
	out = append(out, typ...)
	out = append(out, '"')
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...)
}

// Unmarshal decodes one text message strictly: it reads "type", decodes the
// matching message rejecting unknown fields, duplicate keys, wrong types and
// missing required fields, then checks every rule of the schema that types
// cannot express (see the Validate methods). Every error is an *Error with
// code invalid_message (or invalid_action for a well-formed action message
// that breaks a verb rule) whose detail names the JSON path.
func Unmarshal(data []byte) (Message, error) {
	typ, ok := strictjson.TopString(data, "type")
	if !ok {
		if err := strictjson.Schema.Valid(data); err != nil {
			return nil, decodeErr(err)
		}
		return nil, &Error{Code: CodeInvalidMessage, Detail: `$.type: missing or not a string`}
	}
	m := newMessage(typ)
	if m == nil {
		return nil, &Error{Code: CodeInvalidMessage, Detail: fmt.Sprintf("$.type: unknown message type %q", typ)}
	}
	if err := skipType.Unmarshal(data, m); err != nil {
		return nil, decodeErr(err)
	}
	if v, ok := m.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// skipType is how a message is read: by the schema's reading of JSON
// (strictjson.Schema), its "type", already read, skipped.
var skipType = func() strictjson.Options {
	o := strictjson.Schema
	o.Skip = "type"
	return o
}()

func newMessage(typ string) Message {
	switch typ {
	case "hello":
		return new(Hello)
	case "welcome":
		return new(Welcome)
	case "ping":
		return new(Ping)
	case "pong":
		return new(Pong)
	case "query":
		return new(Query)
	case "result":
		return new(Result)
	case "action":
		return new(ActionMsg)
	case "ack":
		return new(Ack)
	case "observation":
		return new(Observation)
	case "exec_output":
		return new(ExecOutput)
	case "exec_exit":
		return new(ExecExit)
	}
	return nil
}

func decodeErr(err error) error {
	var se *strictjson.Error
	if errors.As(err, &se) {
		code := CodeInvalidMessage
		if strings.HasPrefix(se.Path, "$.action.") || se.Path == "$.action" {
			code = CodeInvalidAction
		}
		return &Error{Code: code, Detail: se.Error(), Err: err}
	}
	return &Error{Code: CodeInvalidMessage, Detail: err.Error(), Err: err}
}

// DecodeJSON decodes data into v (a pointer to one of this package's
// structs, such as *ExecResult or *ActionBatch) with the same strictness as
// Unmarshal, and runs v's Validate method when it has one.
func DecodeJSON(data []byte, v any) error {
	if err := strictjson.Schema.Unmarshal(data, v); err != nil {
		return decodeErr(err)
	}
	if val, ok := v.(interface{ Validate() error }); ok {
		return val.Validate()
	}
	return nil
}

// MaxBinaryHeader bounds the JSON header of a binary frame.
const MaxBinaryHeader = 1 << 20

// AppendBinaryFrame appends a binary frame to dst: a little-endian uint32
// header length, the JSON header (with "type" first), then the payload.
// header is a *BinaryFrameHeader or a *BinaryExecOutputHeader whose offsets
// already point into payload.
func AppendBinaryFrame(dst []byte, header Message, payload ...[]byte) ([]byte, error) {
	h, err := frameHeader(header)
	if err != nil {
		return dst, err
	}
	return appendFrame(dst, h, payload...), nil
}

// appendFrame appends the frame made of the encoded header h and payload.
func appendFrame(dst, h []byte, payload ...[]byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(h)))
	dst = append(dst, h...)
	for _, p := range payload {
		dst = append(dst, p...)
	}
	return dst
}

// frameHeader encodes a binary frame's JSON header, "type" first.
func frameHeader(header Message) ([]byte, error) {
	body, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	return spliceType(header.MessageType(), body), nil
}

// FrameHeadroom is the room the runtime leaves before an encoded image for
// its binary frame's header (one that does not fit is copied in front).
const FrameHeadroom = 1024

// PutFrameHeader writes a binary frame's length and header into the
// headroom bytes that precede the payload in buf, and returns the frame: a
// slice of buf that starts where the header does. When the header does not
// fit, it returns a new frame, the payload copied after the header.
func PutFrameHeader(buf []byte, headroom int, header Message) ([]byte, error) {
	h, err := frameHeader(header)
	if err != nil {
		return nil, err
	}
	start := headroom - 4 - len(h)
	if start < 0 {
		return appendFrame(make([]byte, 0, 4+len(h)+len(buf)-headroom), h, buf[headroom:]), nil
	}
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(h)))
	copy(buf[start+4:], h)
	return buf[start:], nil
}

// DecodeBinaryFrame splits a binary frame into its header, a
// *BinaryFrameHeader or a *BinaryExecOutputHeader, and its payload area.
// Every offset in the header is checked against the payload; a frame that
// lies about its lengths is an error, never a panic.
func DecodeBinaryFrame(frame []byte) (Message, []byte, error) {
	if len(frame) < 4 {
		return nil, nil, &Error{Code: CodeInvalidMessage, Detail: "binary frame shorter than its 4-byte header length"}
	}
	n := binary.LittleEndian.Uint32(frame)
	if n > MaxBinaryHeader || uint64(n) > uint64(len(frame)-4) {
		return nil, nil, &Error{Code: CodeInvalidMessage, Detail: fmt.Sprintf("binary header_len %d runs past the frame's %d bytes", n, len(frame)-4)}
	}
	hdr := frame[4 : 4+n]
	payload := frame[4+n:]
	typ, ok := strictjson.TopString(hdr, "type")
	if !ok {
		if err := strictjson.Schema.Valid(hdr); err != nil {
			return nil, nil, decodeErr(err)
		}
		return nil, nil, &Error{Code: CodeInvalidMessage, Detail: "$.type: missing or not a string"}
	}
	var m Message
	switch typ {
	case "observation":
		m = new(BinaryFrameHeader)
	case "exec_output":
		m = new(BinaryExecOutputHeader)
	default:
		return nil, nil, &Error{Code: CodeInvalidMessage, Detail: fmt.Sprintf("$.type: %q is not a binary frame kind", typ)}
	}
	if err := skipType.Unmarshal(hdr, m); err != nil {
		return nil, nil, decodeErr(err)
	}
	if err := m.(interface{ Validate() error }).Validate(); err != nil {
		return nil, nil, err
	}
	if err := checkRanges(m, len(payload)); err != nil {
		return nil, nil, err
	}
	return m, payload, nil
}

func checkRanges(m Message, size int) error {
	check := func(path string, off, n int) error {
		if off < 0 || n < 0 || off > size || n > size-off {
			return &Error{Code: CodeInvalidMessage, Detail: fmt.Sprintf("%s: bytes [%d, %d+%d) outside the %d-byte payload", path, off, off, n, size)}
		}
		return nil
	}
	switch h := m.(type) {
	case *BinaryFrameHeader:
		if h.Image != nil {
			if err := check("$.image", h.Image.Off, h.Image.Len); err != nil {
				return err
			}
		}
		for i, t := range h.Tiles {
			if err := check(fmt.Sprintf("$.tiles[%d]", i), t.Off, t.Len); err != nil {
				return err
			}
		}
	case *BinaryExecOutputHeader:
		return check("$.data", h.Data.Off, h.Data.Len)
	}
	return nil
}

// Bytes returns the payload bytes at r. It assumes r was checked by
// DecodeBinaryFrame.
func (r ByteRange) Bytes(payload []byte) []byte { return payload[r.Off : r.Off+r.Len] }
