package osexec

import "shinken.dev/go/shinken"

// DefaultBudget is the per-channel budget of the buffered exec form when
// the runtime is not configured otherwise: 1 MiB.
const DefaultBudget = 1 << 20

// Output is the buffered result of a process; see [shinken.Collected].
type Output = shinken.Collected

// Collect reads p to the end, keeping up to budget bytes of each channel;
// see [shinken.Collect].
func Collect(p shinken.Process, budget int) (Output, error) { return shinken.Collect(p, budget) }

// Text returns b as UTF-8 with lossy replacement; see [shinken.OutputText].
func Text(b []byte, truncated bool) string { return shinken.OutputText(b, truncated) }
