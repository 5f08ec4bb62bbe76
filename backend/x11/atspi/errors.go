package atspi

import (
	"fmt"

	"shinken.dev/go/shinken/aci"
)

// A NotAppliedError reports that an application kept another value than
// the one set_value gave it: a read-only field, a value outside a slider's
// range, an input filter. It wraps [aci.ErrElementNotActionable].
type NotAppliedError struct {
	ID   string // the node
	Want string // the value given
	Got  string // the value read back
}

// Error says what the node reads and what it was set to.
func (e *NotAppliedError) Error() string {
	return fmt.Sprintf("atspi: %s reads %q after being set to %q", e.ID, e.Got, e.Want)
}

// Unwrap returns [aci.ErrElementNotActionable], the error's wire code.
func (e *NotAppliedError) Unwrap() error { return aci.ErrElementNotActionable }
