package realapps

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken/aci"
)

// TestActiveAppCloses closes the active application's window and checks
// that the next observation names the windows that remain, with the ids
// activate_window takes: another application's, and a terminal's that has
// no accessibility tree at all. Before that, the header of a window with no
// accessible name (zenity's form without a title) gives its X title.
func TestActiveAppCloses(t *testing.T) {
	d := newDesk(t)
	if _, err := exec.LookPath("xterm"); err != nil {
		atspitest.Missing(t, "xterm")
	}
	d.sess.Launch(t, "xterm", "-T", "Plain terminal")
	d.sess.Launch(t, "zenity", "--info", "--title=Behind", "--text=behind")
	ctx := ctxT(t)
	d.observe("the info dialog", func(o *aci.Observation) bool { return strings.Contains(o.TreeText, `"Behind"`) })
	d.sess.Launch(t, "zenity", "--forms", "--text=Front", "--add-entry=Name")
	obs := d.observe("the form", func(o *aci.Observation) bool {
		return ref(o, "push button", "Cancel") != "" && strings.Contains(o.TreeText, `"Front"`)
	})
	if !strings.HasPrefix(obs.TreeText, `# app "zenity" window "`) || strings.HasPrefix(obs.TreeText, `# app "zenity" window ""`) {
		t.Errorf("the untitled form's header does not give its X title:\n%s", obs.TreeText)
	}
	windows, err := d.c.ListWindows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := func(o *aci.Observation, title string) bool {
		for _, w := range windows {
			if w.Title == title {
				return strings.Contains(o.TreeText, fmt.Sprintf("%q (window_id %d)", title, w.ID))
			}
		}
		return false
	}
	for _, title := range []string{"Behind", "Plain terminal"} {
		if !named(obs, title) {
			t.Errorf("the form's observation does not name the window %q with its id:\n%s", title, obs.TreeText)
		}
	}
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "push button", "Cancel"))); err != nil {
		t.Fatal(err)
	}
	after := d.observe("the form gone", func(o *aci.Observation) bool { return !strings.Contains(o.TreeText, `"Front"`) })
	if !strings.Contains(after.TreeText, `"Behind"`) || !named(after, "Plain terminal") {
		t.Errorf("after the form closed, the observation does not name the windows that remain:\n%s", after.TreeText)
	}

	// The last application with a tree closes: the terminal is still named.
	if err := d.c.Click(ctx, aci.Ref(ref(after, "push button", "OK"))); err != nil {
		t.Fatal(err)
	}
	last := d.observe("the info dialog gone", func(o *aci.Observation) bool { return !strings.Contains(o.TreeText, `"Behind"`) })
	if !named(last, "Plain terminal") {
		t.Errorf("with no application left, the observation does not name the terminal:\n%s", last.TreeText)
	}
	t.Logf("form:\n%s\nafter:\n%s\nlast:\n%s", obs.TreeText, after.TreeText, last.TreeText)
}
