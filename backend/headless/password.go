package headless

import "shinken.dev/go/shinken"

// A PasswordEntry is a single-line entry whose text is drawn as bullets and
// never leaves it: it is not copied or cut to the clipboard, and its
// accessible node, with role "password text" and the "single line" and
// "editable" states, has no value, as GTK and browsers expose a password
// field. Its action "activate" does what Return does: it clicks the
// window's default button. set_value sets its text.
type PasswordEntry struct{ editor }

// AddPasswordEntry adds a password entry. A non-empty label is shown above
// it and is its accessible name.
func (w *Window) AddPasswordEntry(label string) *PasswordEntry {
	if label != "" {
		w.AddLabel(label)
	}
	e := &PasswordEntry{editor{widget: widget{name: label}, masked: true}}
	w.add(e)
	return e
}

// Text returns the password as typed.
func (e *PasswordEntry) Text() string {
	e.win.d.lock()
	defer e.win.d.unlock()
	return string(e.text)
}

// SetText replaces the password and puts the caret at its end. Newlines
// become spaces.
func (e *PasswordEntry) SetText(text string) {
	e.win.d.lock()
	defer e.win.d.unlock()
	e.set(text)
}

func (e *PasswordEntry) measure(int) (int, bool) { return e.win.d.m.control, false }

func (e *PasswordEntry) describe(n *shinken.Node) {
	e.editor.describe(n)
	n.Role, n.Value = "password text", ""
	n.Actions = []string{"activate"}
}

func (e *PasswordEntry) invoke(string) {
	if def := e.win.def; def != nil {
		def.click()
	}
}
