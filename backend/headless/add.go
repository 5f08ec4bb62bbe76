package headless

// A container is what holds widgets in a column: a window, or a scroll
// view inside one. The widgets both offer are made once, here.
type container interface{ add(control) }

func addLabel(c container, text string) *Label {
	l := &Label{text: text}
	c.add(l)
	return l
}

func addButton(c container, text string, onClick func()) *Button {
	b := &Button{text: text, onClick: onClick}
	c.add(b)
	return b
}

func addCheckBox(c container, text string, onToggle func(checked bool)) *CheckBox {
	cb := &CheckBox{text: text, onToggle: onToggle}
	c.add(cb)
	return cb
}

// addEntry adds a single-line entry with its label above it, the label
// being its accessible name.
func addEntry(c container, label string) *Entry {
	if label != "" {
		addLabel(c, label)
	}
	e := &Entry{editor{widget: widget{name: label}}}
	c.add(e)
	return e
}
