package jsonrpc

import (
	"encoding/json"
	"testing"

	"shinken.dev/go/internal/strictjson"
)

// factLine is a fact as a plugin receives it.
var factLine = []byte(`{"jsonrpc":"2.0","method":"events/fact","params":{"name":"agent.status","version":1,"seq":123456,"at":"2026-11-29T23:30:07.123456789Z","project":{"id":"p","name":"Shop","private":false},"agent":{"id":"a1","name":"Ada"},"data":{"status":"working","was":"idle"}}}`)

// BenchmarkValidateLine validates a fact's line strictly, beside
// encoding/json's Valid on the same bytes (which looks for no duplicate
// key) in the same run.
func BenchmarkValidateLine(b *testing.B) {
	b.Run("Validate", func(b *testing.B) {
		b.SetBytes(int64(len(factLine)))
		b.ReportAllocs()
		for b.Loop() {
			if err := strictjson.Validate(factLine); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(factLine)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(factLine) {
				b.Fatal("invalid")
			}
		}
	})
}
