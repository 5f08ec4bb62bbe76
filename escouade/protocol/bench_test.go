package protocol_test

import (
	"encoding/json"
	"testing"

	"shinken.dev/go/escouade/protocol"
)

var (
	decideJSON = []byte(`{"request":{"id":"r1","kind":"command","tool":"Bash","input":{"command":"npm test","cwd":"/src"}},"project":{"id":"p","name":"Shop","private":false},"agent":{"id":"a1","name":"Ada"}}`)
	factJSON   = []byte(`{"name":"agent.status","version":1,"seq":123456,"at":"2026-11-29T23:30:07.123456789Z","project":{"id":"p","name":"Shop","private":false},"agent":{"id":"a1","name":"Ada"},"data":{"status":"working","was":"idle"}}`)
)

// BenchmarkDecode decodes the params of permissions/decide and of a fact
// as a plugin receives them, beside encoding/json decoding the same bytes
// into the same structs through a type without the strict UnmarshalJSON
// (which matches keys in any case and lets a repeated key win).
func BenchmarkDecode(b *testing.B) {
	type plainDecide struct {
		Request struct {
			ID    string         `json:"id"`
			Kind  string         `json:"kind"`
			Tool  string         `json:"tool"`
			Input map[string]any `json:"input"`
		} `json:"request"`
		Project struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			Private bool   `json:"private"`
		} `json:"project"`
		Agent *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"agent"`
	}
	type plainFact struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
		Seq     int64  `json:"seq"`
		At      string `json:"at"`
		Project *struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			Private bool   `json:"private"`
		} `json:"project"`
		Agent *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"agent"`
		Data json.RawMessage `json:"data"`
	}
	benchDecode(b, "DecideParams", decideJSON, (*protocol.DecideParams).UnmarshalJSON)
	benchDecode(b, "DecideParams-json.Unmarshal", decideJSON, func(d *plainDecide, data []byte) error { return json.Unmarshal(data, d) })
	benchDecode(b, "Fact", factJSON, (*protocol.Fact).UnmarshalJSON)
	benchDecode(b, "Fact-json.Unmarshal", factJSON, func(f *plainFact, data []byte) error { return json.Unmarshal(data, f) })
}

// benchDecode runs, as the sub-benchmark name, decode of data into a new
// T each time.
func benchDecode[T any](b *testing.B, name string, data []byte, decode func(*T, []byte) error) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var v T
			if err := decode(&v, data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
