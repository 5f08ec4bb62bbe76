package shinken

import (
	"slices"
	"strings"

	"shinken.dev/go/shinken/aci"
)

// A field the schema admits on every verb but this runtime gives a meaning
// only on some: set says whether an action carries it, verbs lists the
// verbs that honour it (the check and the message are both read from that
// one list), and note adds what the field means on one of them.
type honouredField struct {
	field string
	set   func(*aci.Action) bool
	verbs []aci.Verb
	note  string
}

// heldKeyVerbs are the pointer verbs that hold keys during the gesture.
var heldKeyVerbs = []aci.Verb{aci.VerbClick, aci.VerbDoubleClick, aci.VerbRightClick, aci.VerbMove, aci.VerbDrag, aci.VerbScroll, aci.VerbMouseDown}

// targetVerbs are the verbs that act at a target.
var targetVerbs = []aci.Verb{aci.VerbClick, aci.VerbDoubleClick, aci.VerbRightClick, aci.VerbMove, aci.VerbDrag, aci.VerbMouseDown, aci.VerbMouseUp, aci.VerbScroll, aci.VerbInvokeAction, aci.VerbSetValue}

var honouredFields = []honouredField{
	{"keys", func(a *aci.Action) bool { return a.Keys != "" }, append([]aci.Verb{aci.VerbKey}, heldKeyVerbs...), "held during the gesture on all but key"},
	{"button", func(a *aci.Action) bool { return a.Button != "" }, []aci.Verb{aci.VerbClick, aci.VerbDoubleClick, aci.VerbMouseDown, aci.VerbMouseUp, aci.VerbDrag}, ""},
	{"ms", func(a *aci.Action) bool { return a.MS != 0 }, []aci.Verb{aci.VerbKey, aci.VerbWait}, "on key, how long to hold it"},
	{"dx and dy", func(a *aci.Action) bool { return a.DX != 0 || a.DY != 0 }, []aci.Verb{aci.VerbScroll}, ""},
	{"duration_ms", func(a *aci.Action) bool { return a.DurationMS != 0 }, []aci.Verb{aci.VerbDrag}, ""},
	{"target", func(a *aci.Action) bool { return a.Target != nil }, append(slices.Clone(targetVerbs), aci.VerbObserve), "on observe, the subtree to render"},
	{"to", func(a *aci.Action) bool { return a.To != nil }, []aci.Verb{aci.VerbDrag}, ""},
	{"text", func(a *aci.Action) bool { return a.Text != nil }, []aci.Verb{aci.VerbTypeText, aci.VerbSetValue, aci.VerbClipboardSet, aci.VerbInvokeAction}, ""},
	{"scope", func(a *aci.Action) bool { return a.Scope != "" }, []aci.Verb{aci.VerbScreenshot, aci.VerbStartScreencast, aci.VerbObserve}, ""},
	{"format, quality and max_long_edge", func(a *aci.Action) bool { return a.Format != "" || a.Quality != nil || a.MaxLongEdge != nil }, []aci.Verb{aci.VerbScreenshot, aci.VerbStartScreencast}, "observe takes them in observe"},
	{"fps, delta and resume_stream", func(a *aci.Action) bool { return a.FPS != nil || a.Delta || a.ResumeStream != "" }, []aci.Verb{aci.VerbStartScreencast}, ""},
	{"if_none_match", func(a *aci.Action) bool { return a.IfNoneMatch != "" }, []aci.Verb{aci.VerbScreenshot}, ""},
}

// honoured refuses, with invalid_action, the fields the schema admits on
// every verb but that this runtime gives a meaning only on some verbs: a
// field the runtime accepts does what it says, never is acked and ignored.
// The schema's own rules are [Action.Validate]'s; these are the runtime's,
// so their errors name the field, not a JSON path. (A function, not a
// method: the wire types may live in their own package.)
func honoured(a *aci.Action) error {
	v := a.Verb
	if slices.Contains(heldKeyVerbs, v) && len(strings.Fields(a.Keys)) > 1 {
		return aci.Errorf(aci.CodeInvalidAction, "keys held during %s must be one combination such as \"ctrl+shift\", got %q", v, a.Keys)
	}
	for _, f := range honouredFields {
		if f.set(a) && !slices.Contains(f.verbs, v) {
			return aci.Errorf(aci.CodeInvalidAction, "%s is honoured only on %s, not on %s", f.field, f.says(), v)
		}
	}
	return nil
}

// says lists the field's verbs in words: "a, b and c (note)".
func (f honouredField) says() string {
	names := make([]string, len(f.verbs))
	for i, v := range f.verbs {
		names[i] = string(v)
	}
	s := names[len(names)-1]
	if len(names) > 1 {
		s = strings.Join(names[:len(names)-1], ", ") + " and " + s
	}
	if f.note != "" {
		s += " (" + f.note + ")"
	}
	return s
}
