package shinken

import "strings"

// honoured refuses, with invalid_action, the fields the schema admits on
// every verb but that this runtime gives a meaning only on some verbs: a
// field the runtime accepts does what it says, never is acked and ignored.
// The schema's own rules are [Action.Validate]'s; these are the runtime's,
// so their errors name the field, not a JSON path.
func (a *Action) honoured() error {
	v := a.Verb
	refuse := func(field, verbs string) error {
		return Errorf(CodeInvalidAction, "%s is honoured only on %s, not on %s", field, verbs, v)
	}
	heldKeys := v == VerbClick || v == VerbDoubleClick || v == VerbRightClick || v == VerbDrag || v == VerbScroll || v == VerbMouseDown
	switch {
	case a.Keys != "" && v != VerbKey && !heldKeys:
		return refuse("keys", "key, and as keys held during click, double_click, right_click, drag, scroll and mouse_down")
	case heldKeys && len(strings.Fields(a.Keys)) > 1:
		return Errorf(CodeInvalidAction, "keys held during %s must be one combination such as \"ctrl+shift\", got %q", v, a.Keys)
	case a.Button != "" && v != VerbClick && v != VerbDoubleClick && v != VerbMouseDown && v != VerbMouseUp && v != VerbDrag:
		return refuse("button", "click, double_click, mouse_down, mouse_up and drag")
	case a.MS != 0 && v != VerbKey && v != VerbWait:
		return refuse("ms", "key (how long to hold it) and wait")
	case (a.DX != 0 || a.DY != 0) && v != VerbScroll:
		return refuse("dx and dy", "scroll")
	case a.DurationMS != 0 && v != VerbDrag:
		return refuse("duration_ms", "drag")
	}
	return nil
}
