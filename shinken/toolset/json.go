package toolset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Fixed-length arrays that refuse any other length: encoding/json would
// drop extra elements and zero missing ones.
type (
	ints2   [2]int
	ints4   [4]int
	floats2 [2]float64
)

func exact[T any](b []byte, dst []T, what string) error {
	var s []T
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if len(s) != len(dst) {
		return fmt.Errorf("%s needs %d numbers, got %d", what, len(dst), len(s))
	}
	copy(dst, s)
	return nil
}

// UnmarshalJSON decodes exactly two numbers, rounded to integers.
func (p *ints2) UnmarshalJSON(b []byte) error { return rounded(b, p[:], "a point [x, y]") }

// UnmarshalJSON decodes exactly four numbers, rounded to integers.
func (p *ints4) UnmarshalJSON(b []byte) error { return rounded(b, p[:], "a region [x0, y0, x1, y1]") }

// rounded decodes len(dst) numbers into dst, each rounded to the nearest
// integer (half away from zero): the vendors' types take any JSON number
// for a coordinate, and models write 512.5 at times.
func rounded(b []byte, dst []int, what string) error {
	f := make([]float64, len(dst))
	if err := exact(b, f, what); err != nil {
		return err
	}
	for i, v := range f {
		if math.Abs(v) > 1<<31 {
			return fmt.Errorf("%s: %g is out of range", what, v)
		}
		dst[i] = int(math.Round(v))
	}
	return nil
}

// coord is one coordinate as a vendor's types take it: any JSON number,
// rounded to the nearest integer.
type coord int

// UnmarshalJSON decodes a number, rounded.
func (c *coord) UnmarshalJSON(b []byte) error {
	var v [1]int
	if err := rounded(append(append([]byte{'['}, b...), ']'), v[:], "a coordinate"); err != nil {
		return err
	}
	*c = coord(v[0])
	return nil
}

// UnmarshalJSON decodes exactly two numbers.
func (p *floats2) UnmarshalJSON(b []byte) error { return exact(b, p[:], "a point [x, y]") }

// objectFields returns the keys of a JSON object whose values are not null:
// a null field counts as absent. Empty input is {}.
func objectFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fields, nil
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("toolset: the input is not a JSON object: %w", err)
	}
	for k, v := range fields {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(fields, k)
		}
	}
	return fields, nil
}

// A fieldSpec is what one action of a vendor's tool takes: the fields it
// may take and those it must, besides the ones every action of that tool
// takes (its name's own field, Gemini's intent…).
type fieldSpec struct{ optional, required []string }

// check refuses a field the action does not take and a missing required
// one, naming the action; always are fields any action may carry.
func (s fieldSpec) check(action string, fields map[string]json.RawMessage, always ...string) error {
	for f := range fields {
		if !slices.Contains(always, f) && !slices.Contains(s.optional, f) && !slices.Contains(s.required, f) {
			return fmt.Errorf("toolset: %s takes no %q", action, f)
		}
	}
	for _, f := range s.required {
		if _, ok := fields[f]; !ok {
			return fmt.Errorf("toolset: %s requires %q", action, f)
		}
	}
	return nil
}
