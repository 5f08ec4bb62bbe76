package aci_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"shinken.dev/go/shinken/aci"
)

var clickJSON = []byte(`{"type":"action","call_id":"c42","action":{"verb":"click","target":{"kind":"point_px","x":640,"y":400}}}`)

// BenchmarkDecodeClick measures decoding plus validating a click action.
func BenchmarkDecodeClick(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(clickJSON)))
	for b.Loop() {
		if _, err := aci.Unmarshal(clickJSON); err != nil {
			b.Fatal(err)
		}
	}
}

func observation100() []byte {
	obs := &aci.Observation{ObsID: "o1", CallID: "c1", Tree: "full", TreeText: "app notes", Revision: 3, Focus: "e4"}
	n := 100
	obs.NodeCount = &n
	for i := range n {
		obs.Elements = append(obs.Elements, aci.Element{
			Ref: fmt.Sprintf("e%d", i+1), Role: "push button", Name: fmt.Sprintf("Button %d", i),
			States: []string{"enabled", "sensitive", "showing", "visible", "focusable"}, Actions: []string{"click"},
			BBox: []float64{float64(i), 20, 80, 24}, Source: aci.SourceATSPI,
			Provenance: map[string]any{"widget": float64(i)},
		})
	}
	data, err := aci.Marshal(obs)
	if err != nil {
		panic(err)
	}
	return data
}

// BenchmarkDecodeObservation100 measures decoding plus validating a
// structured observation of 100 elements.
func BenchmarkDecodeObservation100(b *testing.B) {
	data := observation100()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := aci.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeReference decodes the click and the observation of the
// benchmarks above with encoding/json into the same structs, skipping
// every check, as the reference of the same run.
func BenchmarkDecodeReference(b *testing.B) {
	obs := observation100()
	for _, tt := range []struct {
		name string
		data []byte
		v    func() any
	}{
		{"Click", clickJSON, func() any { return new(aci.ActionMsg) }},
		{"Observation100", obs, func() any { return new(aci.Observation) }},
	} {
		b.Run(tt.name+"/json.Unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tt.data)))
			for b.Loop() {
				if err := json.Unmarshal(tt.data, tt.v()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
