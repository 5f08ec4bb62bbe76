// Package schema holds the JSON Schema of the Escouade plugin protocol,
// version 1: its messages, its method table (x-methods), its timeouts and
// its error codes (x-errors), so that programs and tests can read and
// validate against it.
package schema

import _ "embed"

// Protocol1 is escouade-plugin-protocol-1.schema.json, byte for byte as
// published (JSON Schema draft-07).
//
//go:embed escouade-plugin-protocol-1.schema.json
var Protocol1 []byte
