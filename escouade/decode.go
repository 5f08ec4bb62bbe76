package escouade

import (
	"strings"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
)

// The Host decodes its manifest and the params of its methods as the
// protocol's messages are decoded (internal/fields): a key matches only as
// written, a known key given twice is an error, and every error names the
// field's path. These are the short names the Host's decoders use.

func object(raw []byte, names []string, strict bool, set func(i int, v []byte) error) (uint64, error) {
	return fields.Object(raw, names, strict, set)
}

func require(seen, mask uint64, names []string) error { return fields.Require(seen, mask, names) }
func str(v []byte) (string, error)                    { return fields.String(v) }
func integer(v []byte) (int64, error)                 { return fields.Int(v) }
func boolean(v []byte) (bool, error)                  { return fields.Bool(v) }
func fieldErr(path, format string, args ...any) *protocol.FieldError {
	return fields.Errorf(path, format, args...)
}

// paramsMessage words the errors of params that do not hold for the
// invalidParams answer: every field named, on one line.
func paramsMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), "escouade: ", "")
	return "invalid params: " + strings.ReplaceAll(msg, "\n", "; ")
}
