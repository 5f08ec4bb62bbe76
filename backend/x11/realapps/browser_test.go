package realapps

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// formReady says the form page is observed whole, loaded and laid out: its
// document no longer busy, its Send button, the first rows of its long
// list, and the Edge button placed across the viewport's bottom edge.
func formReady(o *aci.Observation) bool {
	doc, err := o.Find("document web", "Shinken form")
	return err == nil && !slices.Contains(doc.States, "busy") &&
		ref(o, "push button", "Send") != "" && strings.Contains(o.TreeText, `"Row 1"`) &&
		strings.Contains(o.TreeText, `push button (partly offscreen) "Edge"`)
}

// TestChromium and TestFirefox drive the form page (testdata/form.html) as
// an agent would, by refs alone.
func TestChromium(t *testing.T) { testBrowser(t, "chromium") }
func TestFirefox(t *testing.T)  { testBrowser(t, "firefox") }

func testBrowser(t *testing.T, browser string) {
	d := newDesk(t)
	if browser == "chromium" {
		d.chromium("form.html")
	} else {
		d.firefox("form.html")
	}
	ctx := ctxT(t)
	ready := formReady
	if browser == "chromium" {
		// Chromium offers the document's scroll actions only once it has
		// laid the page out, which a loaded machine reaches after the rest;
		// this page overflows its window, so they come, and the golden
		// holds them.
		ready = func(o *aci.Observation) bool {
			doc, err := o.Find("document web", "Shinken form")
			return formReady(o) && err == nil && slices.Contains(doc.Actions, "scrollDown")
		}
	}
	obs := d.observe("the form", ready)
	checkInteractiveLines(t, obs)
	golden(t, browser+"-form.txt", pagePart(obs.TreeText))

	// Every field by set_value.
	for field, text := range map[string]string{"Name": "Ada Lovelace", "Email": "ada@example.com", "Notes": "two\nlines"} {
		r := ref(obs, "entry", field)
		if r == "" {
			t.Fatalf("no entry %q in\n%s", field, obs.TreeText)
		}
		if err := d.c.SetValue(ctx, aci.Ref(r), text); err != nil {
			t.Fatalf("set_value %s (%s): %v", field, r, err)
		}
	}
	// A select option, by its name.
	if err := d.c.SetValue(ctx, aci.Ref(ref(obs, "combo box", "Colour")), "Blue"); err != nil {
		t.Fatalf("set_value on the select: %v", err)
	}
	// A check box, by a click on its ref.
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "check box", "Gift wrap"))); err != nil {
		t.Fatalf("click the check box: %v", err)
	}
	d.observe("the check box checked", func(o *aci.Observation) bool {
		e := element(o, ref(obs, "check box", "Gift wrap"))
		return e != nil && hasState(e, "checked")
	})
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "push button", "Send"))); err != nil {
		t.Fatalf("click Send: %v", err)
	}
	d.observe("the form sent", func(o *aci.Observation) bool {
		return strings.Contains(o.TreeText, "Sent: Ada Lovelace, ada@example.com, Blue, gift, two")
	})

	// A field by click + type_text, replacing what set_value put there.
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "entry", "Name"))); err != nil {
		t.Fatal(err)
	}
	d.observe("the name field focused", func(o *aci.Observation) bool {
		e := element(o, ref(obs, "entry", "Name"))
		return e != nil && e.Focused
	})
	if err := d.c.Key(ctx, "ctrl+a"); err != nil {
		t.Fatal(err)
	}
	if err := d.c.TypeText(ctx, "Grace Hopper"); err != nil {
		t.Fatal(err)
	}
	d.observe("the typed name", func(o *aci.Observation) bool {
		e := element(o, ref(obs, "entry", "Name"))
		return e != nil && e.Value == "Grace Hopper"
	})

	// A button half below the viewport's edge: the click lands on it.
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "push button", "Edge"))); err != nil {
		t.Fatalf("click the half-hidden button: %v", err)
	}
	d.observe("the edge button clicked", func(o *aci.Observation) bool {
		return strings.Contains(o.TreeText, `"Edge clicked"`)
	})

	// Scroll the long list and read the rows that come into view.
	if err := d.c.Scroll(ctx, aci.Ref(ref(obs, "list", "")), 0, 5); err != nil {
		t.Fatalf("scroll the list: %v", err)
	}
	d.observe("rows below the first screen of the list", func(o *aci.Observation) bool {
		return !strings.Contains(o.TreeText, `"Row 1"`) && laterRow.MatchString(o.TreeText)
	})

	// Follow a link.
	if err := d.c.Click(ctx, aci.Ref(ref(obs, "link", "Next page"))); err != nil {
		t.Fatalf("click the link: %v", err)
	}
	d.observe("the second page", func(o *aci.Observation) bool {
		return ref(o, "heading", "Second page") != ""
	})
}

// laterRow matches a row the list does not show before it is scrolled.
var laterRow = regexp.MustCompile(`"Row ([1-4][0-9])"`)

func hasState(e *aci.Element, s string) bool {
	for _, x := range e.States {
		if x == s {
			return true
		}
	}
	return false
}

// interactive roles, as the tree_text rules name them.
var interactiveRoles = map[string]bool{"link": true, "push button": true, "entry": true, "check box": true,
	"radio button": true, "combo box": true, "page tab": true, "menu item": true, "slider": true, "spin button": true}

// checkInteractiveLines checks that every showing interactive element has
// a line of its own in tree_text.
func checkInteractiveLines(t testing.TB, obs *aci.Observation) {
	t.Helper()
	for _, e := range obs.Elements {
		if interactiveRoles[e.Role] && hasState(&e, "showing") && !hasState(&e, "defunct") &&
			!strings.Contains(obs.TreeText, e.Ref+" "+e.Role) {
			t.Errorf("%s %s %q has no line in tree_text:\n%s", e.Ref, e.Role, e.Name, obs.TreeText)
		}
	}
}

// pagePart keeps the page's lines of a browser window's tree_text (from the
// document on, refs renumbered from e1), so that the golden does not vary
// with the browser's chrome.
func pagePart(text string) string {
	lines := strings.Split(text, "\n")
	start, indent := -1, ""
	var out []string
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if start < 0 {
			if strings.Contains(trimmed, " document web ") {
				start, indent = i, l[:len(l)-len(trimmed)]
			} else {
				continue
			}
		} else if !strings.HasPrefix(l, indent+"  ") {
			break
		}
		out = append(out, strings.TrimPrefix(l, indent))
	}
	return renumber(strings.Join(out, "\n")) + "\n"
}
