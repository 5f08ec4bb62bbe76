// Package schema holds the JSON Schema of ACI v0, the contract for every
// message on the wire, so programs and tests can validate against it.
package schema

import _ "embed"

// ACIv0 is aci-v0.schema.json (JSON Schema draft 2020-12).
//
//go:embed aci-v0.schema.json
var ACIv0 []byte
