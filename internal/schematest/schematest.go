// Package schematest validates JSON against the project's schemas in tests.
//
// It is one of the two test rigs that reach above internal on purpose: it
// imports shinken/aci to check that what the wire types emit is what the
// schema allows, which no package beneath the wire could check, and
// shinken and its client for Serve, the module's tests' one rig of a
// runtime whose every message is checked.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"shinken.dev/go/shinken/aci"
)

const aciURL = "https://shinken.dev/schema/aci/v0"

var (
	once     sync.Once
	compiler *jsonschema.Compiler
	cache    = map[string]*jsonschema.Schema{}
	mu       sync.Mutex
	loadErr  error
)

func load() {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(aci.Schema))
	if err != nil {
		loadErr = err
		return
	}
	compiler = jsonschema.NewCompiler()
	if err := compiler.AddResource(aciURL, doc); err != nil {
		loadErr = err
	}
}

// ACI returns the compiled ACI v0 schema, or the $def named def when def is
// not empty ("ExecResult", "BinaryFrameHeader"...).
func ACI(def string) (*jsonschema.Schema, error) {
	once.Do(load)
	if loadErr != nil {
		return nil, loadErr
	}
	mu.Lock()
	defer mu.Unlock()
	url := aciURL
	if def != "" {
		url += "#/$defs/" + def
	}
	if s, ok := cache[url]; ok {
		return s, nil
	}
	s, err := compiler.Compile(url)
	if err != nil {
		return nil, err
	}
	cache[url] = s
	return s, nil
}

// Check validates data against the ACI schema (or one of its $defs) and
// returns the validation error, if any.
func Check(def string, data []byte) error {
	s, err := ACI(def)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}

// Valid fails t unless data is valid against the ACI schema (or its $def).
func Valid(t testing.TB, def string, data []byte) {
	t.Helper()
	if err := Check(def, data); err != nil {
		t.Errorf("schema %q rejects %s:\n%v", def, truncate(data), err)
	}
}

// Canonical re-encodes JSON with sorted keys, for comparisons.
func Canonical(data []byte) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	return string(out), err
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}
