package atspi

// An Event is one org.a11y.atspi.Event.Object signal, as [Options.OnEvent]
// receives it: any member (StateChanged, TextChanged, ChildrenChanged,
// BoundsChanged, PropertyChange, TextCaretMoved...), from any application.
type Event struct {
	Sender string // the application's unique bus name
	Path   string // the object's path
	Member string // "StateChanged", "TextChanged"...
	Detail string // the signal's first argument: "focused", "insert"...
}

func firstString(body []any) (string, bool) {
	if len(body) == 0 {
		return "", false
	}
	s, ok := body[0].(string)
	return s, ok
}
