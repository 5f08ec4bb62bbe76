package escouade

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// ProtocolVersion is the version of the plugin protocol this package speaks.
const ProtocolVersion = 1

// The protocol's contract, kept byte for byte as published: its method
// table, timeouts, fact names and error codes are read from it rather than
// copied by hand.
//
//go:embed schema/escouade-plugin-protocol-1.schema.json
var schemaJSON []byte

// A methodSpec is one entry of the schema's x-methods.
type methodSpec struct {
	toPlugin     bool // direction toPlugin; otherwise toEscouade
	notification bool
	timeout      time.Duration // timeoutMs, or x-defaultTimeoutMs for a request
}

type protocolSpec struct {
	version int
	methods map[string]methodSpec
	facts   map[string]bool
	codes   map[string]Code
}

var spec = sync.OnceValue(func() *protocolSpec {
	var raw struct {
		Version        int `json:"x-protocolVersion"`
		DefaultTimeout int `json:"x-defaultTimeoutMs"`
		Methods        map[string]struct {
			Direction    string `json:"direction"`
			Notification bool   `json:"notification"`
			TimeoutMs    int    `json:"timeoutMs"`
		} `json:"x-methods"`
		Errors map[string]struct {
			Code Code `json:"code"`
		} `json:"x-errors"`
		Definitions struct {
			FactName struct {
				Enum []string `json:"enum"`
			} `json:"FactName"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(schemaJSON, &raw); err != nil {
		panic(fmt.Sprintf("escouade: the embedded protocol schema does not parse: %v", err))
	}
	p := &protocolSpec{
		version: raw.Version,
		methods: make(map[string]methodSpec, len(raw.Methods)),
		facts:   make(map[string]bool, len(raw.Definitions.FactName.Enum)),
		codes:   make(map[string]Code, len(raw.Errors)),
	}
	for name, m := range raw.Methods {
		ms := methodSpec{toPlugin: m.Direction == "toPlugin", notification: m.Notification}
		switch {
		case m.TimeoutMs > 0:
			ms.timeout = time.Duration(m.TimeoutMs) * time.Millisecond
		case !m.Notification:
			ms.timeout = time.Duration(raw.DefaultTimeout) * time.Millisecond
		}
		p.methods[name] = ms
	}
	for _, f := range raw.Definitions.FactName.Enum {
		p.facts[f] = true
	}
	for name, e := range raw.Errors {
		p.codes[name] = e.Code
	}
	return p
})

// MethodTimeout returns how long a request of method is waited for: its
// timeoutMs in the schema, else the schema's x-defaultTimeoutMs; 0 for a
// notification or a method the protocol does not name. It serves both
// sides: how long a caller waits is how long a handler may take.
func MethodTimeout(method string) time.Duration {
	if m, ok := spec().methods[method]; ok {
		return m.timeout
	}
	return 0
}
