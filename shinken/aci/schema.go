package aci

import _ "embed"

// Schema is aci-v0.schema.json, the JSON Schema (draft 2020-12) of every
// message on the wire, so programs and tests can validate against the
// contract itself.
//
//go:embed aci-v0.schema.json
var Schema []byte
