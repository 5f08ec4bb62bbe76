package shinken

import (
	"strings"

	"shinken.dev/go/shinken/aci"
)

// honoured refuses, with invalid_action, the fields the schema admits on
// every verb but that this runtime gives a meaning only on some verbs: a
// field the runtime accepts does what it says, never is acked and ignored.
// The schema's own rules are [Action.Validate]'s; these are the runtime's,
// so their errors name the field, not a JSON path. (A function, not a
// method: the wire types may live in their own package.)
func honoured(a *aci.Action) error {
	v := a.Verb
	refuse := func(field, verbs string) error {
		return aci.Errorf(aci.CodeInvalidAction, "%s is honoured only on %s, not on %s", field, verbs, v)
	}
	heldKeys := v == aci.VerbClick || v == aci.VerbDoubleClick || v == aci.VerbRightClick || v == aci.VerbMove || v == aci.VerbDrag || v == aci.VerbScroll || v == aci.VerbMouseDown
	switch {
	case a.Keys != "" && v != aci.VerbKey && !heldKeys:
		return refuse("keys", "key, and as keys held during click, double_click, right_click, move, drag, scroll and mouse_down")
	case heldKeys && len(strings.Fields(a.Keys)) > 1:
		return aci.Errorf(aci.CodeInvalidAction, "keys held during %s must be one combination such as \"ctrl+shift\", got %q", v, a.Keys)
	case a.Button != "" && v != aci.VerbClick && v != aci.VerbDoubleClick && v != aci.VerbMouseDown && v != aci.VerbMouseUp && v != aci.VerbDrag:
		return refuse("button", "click, double_click, mouse_down, mouse_up and drag")
	case a.MS != 0 && v != aci.VerbKey && v != aci.VerbWait:
		return refuse("ms", "key (how long to hold it) and wait")
	case (a.DX != 0 || a.DY != 0) && v != aci.VerbScroll:
		return refuse("dx and dy", "scroll")
	case a.DurationMS != 0 && v != aci.VerbDrag:
		return refuse("duration_ms", "drag")
	case a.Target != nil && !targeted(v) && v != aci.VerbObserve:
		return refuse("target", "click, double_click, right_click, move, drag, mouse_down, mouse_up, scroll, invoke_action, set_value and observe (the subtree to render)")
	case a.To != nil && v != aci.VerbDrag:
		return refuse("to", "drag")
	case a.Text != nil && v != aci.VerbTypeText && v != aci.VerbSetValue && v != aci.VerbClipboardSet && v != aci.VerbInvokeAction:
		return refuse("text", "type_text, set_value, clipboard_set and invoke_action")
	case a.Scope != "" && v != aci.VerbScreenshot && v != aci.VerbStartScreencast && v != aci.VerbObserve:
		return refuse("scope", "screenshot, start_screencast and observe")
	case (a.Format != "" || a.Quality != nil || a.MaxLongEdge != nil) && v != aci.VerbScreenshot && v != aci.VerbStartScreencast:
		return refuse("format, quality and max_long_edge", "screenshot and start_screencast (observe takes them in observe)")
	case (a.FPS != nil || a.Delta || a.ResumeStream != "") && v != aci.VerbStartScreencast:
		return refuse("fps, delta and resume_stream", "start_screencast")
	case a.IfNoneMatch != "" && v != aci.VerbScreenshot:
		return refuse("if_none_match", "screenshot")
	}
	return nil
}

// targeted reports whether v acts at a target.
func targeted(v aci.Verb) bool {
	switch v {
	case aci.VerbClick, aci.VerbDoubleClick, aci.VerbRightClick, aci.VerbMove, aci.VerbDrag, aci.VerbMouseDown, aci.VerbMouseUp, aci.VerbScroll, aci.VerbInvokeAction, aci.VerbSetValue:
		return true
	}
	return false
}
