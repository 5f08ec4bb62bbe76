package shinken

import "strings"

// honoured refuses, with invalid_action, the fields the schema admits on
// every verb but that this runtime gives a meaning only on some verbs: a
// field the runtime accepts does what it says, never is acked and ignored.
// The schema's own rules are [Action.Validate]'s; these are the runtime's,
// so their errors name the field, not a JSON path. (A function, not a
// method: the wire types may live in their own package.)
func honoured(a *Action) error {
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
	case a.Target != nil && !targeted(v):
		return refuse("target", "click, double_click, right_click, move, drag, mouse_down, mouse_up, scroll, invoke_action and set_value")
	case a.To != nil && v != VerbDrag:
		return refuse("to", "drag")
	case a.Text != nil && v != VerbTypeText && v != VerbSetValue && v != VerbClipboardSet && v != VerbInvokeAction:
		return refuse("text", "type_text, set_value, clipboard_set and invoke_action")
	case a.Scope != "" && v != VerbScreenshot && v != VerbStartScreencast && v != VerbObserve:
		return refuse("scope", "screenshot, start_screencast and observe")
	case (a.Format != "" || a.Quality != nil || a.MaxLongEdge != nil) && v != VerbScreenshot && v != VerbStartScreencast:
		return refuse("format, quality and max_long_edge", "screenshot and start_screencast (observe takes them in observe)")
	case (a.FPS != nil || a.Delta || a.ResumeStream != "") && v != VerbStartScreencast:
		return refuse("fps, delta and resume_stream", "start_screencast")
	case a.IfNoneMatch != "" && v != VerbScreenshot:
		return refuse("if_none_match", "screenshot")
	}
	return nil
}

// targeted reports whether v acts at a target.
func targeted(v Verb) bool {
	switch v {
	case VerbClick, VerbDoubleClick, VerbRightClick, VerbMove, VerbDrag, VerbMouseDown, VerbMouseUp, VerbScroll, VerbInvokeAction, VerbSetValue:
		return true
	}
	return false
}
