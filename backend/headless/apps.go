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

// settingsLanguages are the settings app's languages.
var settingsLanguages = []string{"English", "Français", "Deutsch", "Español", "日本語", "한국어"}

// settingsPermissions are the settings app's permissions, more than its
// scroll view shows at once.
var settingsPermissions = []string{"Camera", "Microphone", "Location", "Notifications", "Contacts", "Calendar", "Photos", "Files", "Bluetooth", "Clipboard"}

// settingsApp builds the built-in "settings" application, which shows the
// widgets beyond the form's: a menu bar (File: Save, Reset, Close; Help:
// About), a username entry, a password entry, a language combo box, a theme
// radio group, a scroll view of permission check boxes, and a Save button
// (the default) that writes a summary, or opens a modal dialog when the
// password is empty. About opens a modal dialog too.
func settingsApp(w *Window) {
	w.SetTitle("Settings")
	w.SetSize(420, 610)
	bar := w.AddMenuBar()
	file, help := bar.AddMenu("File"), bar.AddMenu("Help")
	user := w.AddEntry("Username")
	pass := w.AddPasswordEntry("Password")
	lang := w.AddComboBox("Language", nil, settingsLanguages...)
	lang.Select(0)
	theme := w.AddRadioGroup("Theme", nil, "Light", "Dark", "Follow the system")
	theme.Select(0)
	perms := w.AddScrollView("Permissions", 124)
	boxes := make([]*CheckBox, len(settingsPermissions))
	for i, p := range settingsPermissions {
		boxes[i] = perms.AddCheckBox(p, nil)
	}
	var status *Label
	save := func() {
		if pass.Text() == "" {
			w.OpenDialog("Cannot save", func(dlg *Window) {
				dlg.SetSize(320, 120)
				dlg.AddLabel("Enter a password first.")
				ok := dlg.AddButton("OK", dlg.Close)
				dlg.SetDefault(ok)
			})
			return
		}
		granted := 0
		for _, b := range boxes {
			if b.Checked() {
				granted++
			}
		}
		name := strings.TrimSpace(user.Text())
		if name == "" {
			name = "nobody"
		}
		themes := []string{"light", "dark", "system"}
		status.SetText(fmt.Sprintf("Saved: %s, a password of %d characters, %s, %s theme, %d permissions.",
			name, utf8.RuneCountInString(pass.Text()), settingsLanguages[max(0, lang.Selected())], themes[max(0, theme.Selected())], granted))
	}
	saveButton := w.AddButton("Save", save)
	status = w.AddLabel("Not saved yet.")
	w.SetDefault(saveButton)
	file.AddItem("Save", save)
	file.AddItem("Reset", func() {
		user.SetText("")
		pass.SetText("")
		lang.Select(0)
		theme.Select(0)
		for _, b := range boxes {
			b.SetChecked(false)
		}
		status.SetText("Not saved yet.")
	})
	file.AddItem("Close", w.Close)
	help.AddItem("About Settings", func() {
		w.OpenDialog("About Settings", func(dlg *Window) {
			dlg.SetSize(340, 130)
			dlg.AddLabel("Settings 1.0: the headless desktop's widgets, in one window.")
			ok := dlg.AddButton("OK", dlg.Close)
			dlg.SetDefault(ok)
		})
	})
	w.Focus(user)
}
