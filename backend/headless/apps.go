package headless

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// notesApp builds the built-in "notes" application: a text area, a Save
// button, and a status label that Save updates. Its arguments, joined with
// spaces, are the initial text.
func notesApp(w *Window) {
	w.SetTitle("Notes")
	w.SetSize(460, 340)
	text := w.AddTextArea("Note")
	if args := w.Args(); len(args) > 0 {
		text.SetText(strings.Join(args, " "))
	}
	var status *Label
	w.AddButton("Save", func() {
		t := text.Text()
		lines := strings.Count(t, "\n") + 1
		if t == "" {
			lines = 0
		}
		status.SetText(fmt.Sprintf("Saved %d characters in %d lines.", utf8.RuneCountInString(t), lines))
	})
	status = w.AddLabel("Not saved yet.")
	w.Focus(text)
}

// formApp builds the built-in "form" application: Name and Email entries, a
// check box, and a Submit button (the default, so Return submits) that
// writes a summary label.
func formApp(w *Window) {
	w.SetTitle("Form")
	w.SetSize(400, 330)
	name := w.AddEntry("Name")
	email := w.AddEntry("Email")
	news := w.AddCheckBox("Subscribe to the newsletter", nil)
	var summary *Label
	submit := w.AddButton("Submit", func() {
		n, e := strings.TrimSpace(name.Text()), strings.TrimSpace(email.Text())
		switch {
		case n == "":
			summary.SetText("Please enter a name.")
		case e != "" && !strings.Contains(e, "@"):
			summary.SetText(fmt.Sprintf("%q is not an email address.", e))
		default:
			sub := "no"
			if news.Checked() {
				sub = "yes"
			}
			if e == "" {
				e = "no email"
			}
			summary.SetText(fmt.Sprintf("Submitted: %s <%s>, newsletter: %s.", n, e, sub))
		}
	})
	summary = w.AddLabel("Fill in the form and press Submit.")
	w.SetDefault(submit)
}
