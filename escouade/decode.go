package escouade

import (
	"strings"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/protocol"
)

// decodeParams decodes params by name into v, a pointer to a tagged
// struct (internal/fields): keys it does not name are ignored, as the
// protocol's params may grow, and every problem is a FieldError naming its
// path. No params at all read as an empty object.
func decodeParams(params []byte, v any) error {
	if params == nil {
		params = []byte("{}")
	}
	return fields.Decode(params, v)
}

// fieldErr returns the FieldError of a value that does not hold, at path.
func fieldErr(path, format string, args ...any) *protocol.FieldError {
	return fields.Errorf(path, format, args...)
}

// paramsMessage words the errors of params that do not hold for the
// invalidParams answer: every field named, on one line.
func paramsMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), "escouade: ", "")
	return "invalid params: " + strings.ReplaceAll(msg, "\n", "; ")
}
