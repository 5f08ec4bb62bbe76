package protocol

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"shinken.dev/go/escouade/schema"
)

// Version is the version of the plugin protocol this package speaks.
const Version = 1

// A Method is an entry of the method table (the schema's x-methods).
type Method struct {
	// ToPlugin: the Host sends it to a plugin (initialize, fact,
	// permissions/decide…); otherwise a plugin sends it to the Host.
	ToPlugin bool
	// Notification: it has no answer.
	Notification bool
	// Timeout is how long a request is waited for, so may take: its
	// timeoutMs, else x-defaultTimeoutMs; 0 for a notification.
	Timeout time.Duration
}

type table struct {
	methods map[string]Method
	facts   map[string]bool
	codes   map[string]Code
}

// The method table, the fact names and the codes are read from the
// schema rather than copied by hand.
var spec = sync.OnceValue(func() *table {
	var raw struct {
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
	if err := json.Unmarshal(schema.Protocol1, &raw); err != nil {
		panic(fmt.Sprintf("escouade: the embedded protocol schema does not parse: %v", err))
	}
	p := &table{
		methods: make(map[string]Method, len(raw.Methods)),
		facts:   make(map[string]bool, len(raw.Definitions.FactName.Enum)),
		codes:   make(map[string]Code, len(raw.Errors)),
	}
	for name, m := range raw.Methods {
		ms := Method{ToPlugin: m.Direction == "toPlugin", Notification: m.Notification}
		switch {
		case m.TimeoutMs > 0:
			ms.Timeout = time.Duration(m.TimeoutMs) * time.Millisecond
		case !m.Notification:
			ms.Timeout = time.Duration(raw.DefaultTimeout) * time.Millisecond
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

// LookupMethod returns name's entry of the method table, if it has one.
func LookupMethod(name string) (m Method, ok bool) {
	m, ok = spec().methods[name]
	return m, ok
}

// MethodTimeout returns method's Method.Timeout; 0 for an unknown method.
func MethodTimeout(method string) time.Duration {
	return spec().methods[method].Timeout
}

// IsFact reports whether name is a fact name (agent.created, ticket.moved…).
func IsFact(name string) bool { return spec().facts[name] }

// codeOf returns the code the schema's x-errors gives name ("refused");
// ok is false for a name it does not have.
func codeOf(name string) (c Code, ok bool) {
	c, ok = spec().codes[name]
	return c, ok
}
