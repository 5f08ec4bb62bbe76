package atspi

// An Event is one org.a11y.atspi.Event.Object signal, as [Options.OnEvent]
// receives it: any member (StateChanged, TextChanged, ChildrenChanged,
// BoundsChanged, PropertyChange, TextCaretMoved...), from any application.
type Event struct {
	Sender string // the application's unique bus name
	Path   string // the object's path
	Member string // "StateChanged", "TextChanged"...
	Detail string // the signal's first argument: "focused", "insert"...
	Value  int    // its second (detail1): 1 or 0 for a StateChanged
}

func firstString(body []any) (string, bool) {
	if len(body) == 0 {
		return "", false
	}
	s, ok := body[0].(string)
	return s, ok
}

func secondInt(body []any) int {
	if len(body) < 2 {
		return 0
	}
	switch v := body[1].(type) {
	case int32:
		return int(v)
	case uint32:
		return int(v)
	}
	return 0
}
