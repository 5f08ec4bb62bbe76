package realapps

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// The differential check: after every action of a scenario, the tree the
// runtime serves from its mirror must equal a fresh full read of the same
// application (a second AT-SPI client that keeps no mirror and reuses
// nothing), whatever events the toolkit sent or left out. One-node tests
// do not find what a toolkit changes without telling; whole scenarios
// compared node by node do.

// rounds is how many times each scenario's step runs: 10, or as many as
// SHINKEN_ROUNDS says (./scripts/stress runs 20, to find what load breaks;
// the suite at rest runs 10, to fit CI's time).
var rounds = func() int {
	if n, err := strconv.Atoi(os.Getenv("SHINKEN_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 10
}()

// fresh returns d's client that reads every snapshot whole, connected on
// first use.
func (d *desk) freshClient() *atspi.Client {
	d.t.Helper()
	if d.fresh != nil {
		return d.fresh
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	// The reference read waits for the application as long as a test
	// does: on a loaded machine a browser's whole tree takes longer than
	// the timeouts that keep a hung application from costing every
	// snapshot, and a reference read that gave up would show no
	// application at all.
	c, err := atspi.Connect(ctx, &atspi.Options{
		Address: d.sess.A11yBus, SessionBus: d.sess.SessionBus, Display: d.sess.Display,
		ScreenReader: true, NoCache: true, ActivePID: d.b.ActivePID, Windows: d.b.Windows,
		AppTimeout: waitFor, CallTimeout: waitFor,
	})
	if err != nil {
		d.t.Fatalf("connect the fresh client: %v", err)
	}
	d.t.Cleanup(func() { c.Close() })
	d.fresh = c
	return c
}

// renderTree describes a tree for comparison: every node's place, id,
// role, name, description, states, value, actions and extents.
func renderTree(tree *shinken.Tree) string {
	var b strings.Builder
	fmt.Fprintf(&b, "app %q window %q\n", tree.App, tree.Window)
	for _, n := range tree.Nodes {
		fmt.Fprintf(&b, "%s%s %s %q %q %v %q %v %v focused=%v\n", strings.Repeat(" ", n.Depth), n.ID, n.Role, n.Name,
			n.Description, n.States, n.Value, n.Actions, n.BBox, n.Focused)
	}
	return b.String()
}

// firstDifference returns the first line where two renderings differ.
func firstDifference(mirror, fresh string) string {
	m, f := strings.Split(mirror, "\n"), strings.Split(fresh, "\n")
	for i := range max(len(m), len(f)) {
		var ml, fl string
		if i < len(m) {
			ml = m[i]
		}
		if i < len(f) {
			fl = f[i]
		}
		if ml != fl {
			return fmt.Sprintf("line %d:\n  mirror: %s\n  fresh:  %s", i+1, ml, fl)
		}
	}
	return ""
}

// agree checks that the active application's tree as the runtime's backend
// serves it equals a fresh full read. The backend's snapshot is taken
// between two fresh reads; when those differ the application was still
// changing and the three are taken again.
func (d *desk) agree(what string) {
	d.t.Helper()
	fresh := d.freshClient()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	active := shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}
	snap := func(a shinken.A11y) string {
		d.t.Helper()
		tree, err := a.Snapshot(ctx, active)
		if err != nil {
			d.t.Fatalf("after %s: snapshot: %v", what, err)
		}
		return renderTree(tree)
	}
	last := ""
	for {
		before := snap(fresh)
		got := snap(d.b)
		after := snap(fresh)
		if before == after {
			if diff := firstDifference(got, before); diff != "" {
				d.t.Fatalf("after %s, the mirror differs from a fresh full read at %s", what, diff)
			}
			return
		}
		last = firstDifference(before, after)
		if ctx.Err() != nil {
			d.t.Fatalf("after %s, the application never held still for two reads; last change at %s", what, last)
		}
	}
}

// look observes once, with no settle and no wait: what an agent sees right
// after an action's ack.
func (d *desk) look() *aci.Observation {
	d.t.Helper()
	obs, err := d.c.Observe(ctxT(d.t), nil)
	if err != nil {
		d.t.Fatalf("observe: %v", err)
	}
	return obs
}

// TestDifferentialGtkTreeRows clicks gtk3-demo's demo rows by ref, one
// after another: the first look after each click shows the row selected,
// and the mirror equals a fresh read.
func TestDifferentialGtkTreeRows(t *testing.T) {
	d := newDesk(t)
	d.sess.Launch(t, "gtk3-demo")
	obs := d.observe("gtk3-demo", func(o *aci.Observation) bool {
		return strings.Contains(o.TreeText, `(active) "Application Class"`) && strings.Contains(o.TreeText, "tree table (focused)")
	})
	d.agree("the start")
	var rows []string
	for _, name := range []string{"Assistant", "Builder", "Button Boxes", "Clipboard", "Color Chooser", "Combo Boxes", "Cursors", "Drawing Area"} {
		r := ref(obs, "table cell", name)
		if r == "" {
			t.Fatalf("no row %q in\n%s", name, obs.TreeText)
		}
		rows = append(rows, r)
	}
	ctx := ctxT(t)
	for i := range rounds {
		r := rows[i%len(rows)]
		if err := d.c.Click(ctx, aci.Ref(r)); err != nil {
			t.Fatalf("round %d: click %s: %v", i, r, err)
		}
		o := d.look()
		if e := element(o, r); e == nil || !hasState(e, "selected") {
			t.Fatalf("round %d: the first look after clicking %s does not show it selected:\n%s", i, r, o.TreeText)
		}
		d.agree(fmt.Sprintf("round %d's click on %s", i, r))
	}
}

// TestDifferentialChromiumLabels and TestDifferentialFirefoxLabels click
// buttons whose label counts the clicks, in the top document and in an
// iframe: the first look after each click shows the new label, and the
// mirror equals a fresh read.
func TestDifferentialChromiumLabels(t *testing.T) { testDifferentialLabels(t, "chromium") }
func TestDifferentialFirefoxLabels(t *testing.T)  { testDifferentialLabels(t, "firefox") }

func testDifferentialLabels(t *testing.T, browser string) {
	d := newDesk(t)
	if browser == "chromium" {
		d.chromium("labels.html")
	} else {
		d.firefox("labels.html")
	}
	obs := d.observe("the labels page", func(o *aci.Observation) bool {
		doc := find(o, "document web", "Shinken labels")
		return doc != nil && !hasState(doc, "busy") && ref(o, "push button", "Count: 0") != "" && ref(o, "push button", "Inner: 0") != ""
	})
	d.agree("the start")
	ctx := ctxT(t)
	top, inner := ref(obs, "push button", "Count: 0"), ref(obs, "push button", "Inner: 0")
	for i := range rounds {
		for _, b := range []struct{ ref, label string }{{top, "Count"}, {inner, "Inner"}} {
			if err := d.c.Click(ctx, aci.Ref(b.ref)); err != nil {
				t.Fatalf("round %d: click %s: %v", i, b.label, err)
			}
			want := fmt.Sprintf("%s: %d", b.label, i+1)
			o := d.look()
			if e := element(o, b.ref); e == nil || e.Name != want {
				t.Fatalf("round %d: the first look after clicking %s does not name it %q:\n%s", i, b.ref, want, o.TreeText)
			}
			d.agree(fmt.Sprintf("round %d's click on %q", i, want))
		}
	}
}

// TestDifferentialQt5 and TestDifferentialQt6 toggle the Qt form's check
// box and radio buttons by ref: the first look after each click shows
// it, and the served tree equals a fresh read.
func TestDifferentialQt5(t *testing.T) { testDifferentialQt(t, "5") }
func TestDifferentialQt6(t *testing.T) { testDifferentialQt(t, "6") }

func testDifferentialQt(t *testing.T, version string) {
	d := newDesk(t)
	d.qt("Qt differential", version)
	obs := d.observe("the Qt form", func(o *aci.Observation) bool {
		return ref(o, "check box", "Subscribe") != "" && ref(o, "radio button", "Large") != ""
	})
	d.agree("the start")
	ctx := ctxT(t)
	box := ref(obs, "check box", "Subscribe")
	radios := []string{ref(obs, "radio button", "Large"), ref(obs, "radio button", "Small")}
	checked := hasState(element(obs, box), "checked")
	for i := range rounds {
		checked = !checked
		if err := d.c.Click(ctx, aci.Ref(box)); err != nil {
			t.Fatalf("round %d: click the check box: %v", i, err)
		}
		if e := element(d.look(), box); e == nil || hasState(e, "checked") != checked {
			t.Fatalf("round %d: the first look shows the check box %+v, want checked=%v", i, e, checked)
		}
		d.agree(fmt.Sprintf("round %d's check box", i))
		radio := radios[i%2]
		if err := d.c.Click(ctx, aci.Ref(radio)); err != nil {
			t.Fatalf("round %d: click the radio button: %v", i, err)
		}
		if e := element(d.look(), radio); e == nil || !hasState(e, "checked") {
			t.Fatalf("round %d: the first look shows the radio button %+v unchecked", i, e)
		}
		d.agree(fmt.Sprintf("round %d's radio button", i))
	}
}

// TestDifferentialZenityForm types into a zenity form's fields by ref,
// characters the layout lacks included, and sets one by set_value, 20
// rounds: the first look reads the text, and the served tree equals a
// fresh read.
func TestDifferentialZenityForm(t *testing.T) {
	d := newDesk(t)
	d.sess.Launch(t, "zenity", "--forms", "--title=Order", "--text=Your order",
		"--add-entry=Name", "--add-entry=Email")
	obs := d.observe("the zenity form", func(o *aci.Observation) bool {
		return ref(o, "text", "Email") != "" && strings.Contains(o.TreeText, `(active) "Order"`)
	})
	d.agree("the start")
	ctx := ctxT(t)
	name, email := ref(obs, "text", "Name"), ref(obs, "text", "Email")
	text := ""
	for i := range rounds {
		if err := d.c.Click(ctx, aci.Ref(name)); err != nil {
			t.Fatalf("round %d: click Name: %v", i, err)
		}
		// GTK selects an entry's text when the focus comes back to it.
		if err := d.c.Key(ctx, "End"); err != nil {
			t.Fatal(err)
		}
		k := string([]rune(roundText(i))[0])
		text += k
		if err := d.c.TypeText(ctx, k); err != nil {
			t.Fatalf("round %d: type %q: %v", i, k, err)
		}
		if e := element(d.look(), name); e == nil || e.Value != text {
			t.Fatalf("round %d: typed %q, the first look reads %+v", i, text, e)
		}
		d.agree(fmt.Sprintf("round %d's typing", i))
		v := fmt.Sprintf("round%d@example.com", i)
		if err := d.c.SetValue(ctx, aci.Ref(email), v); err != nil {
			t.Fatalf("round %d: set_value Email: %v", i, err)
		}
		if e := element(d.look(), email); e == nil || e.Value != v {
			t.Fatalf("round %d: set %q, the first look reads %+v", i, v, e)
		}
		d.agree(fmt.Sprintf("round %d's set_value", i))
	}
}

// TestDifferentialChromiumNavigation and TestDifferentialFirefoxNavigation
// navigate a page by an anchor, by history.pushState and to a new page,
// rounds: the first look after each shows the document's new URL as
// its value, and the mirror equals a fresh read.
func TestDifferentialChromiumNavigation(t *testing.T) { testDifferentialNavigation(t, "chromium") }
func TestDifferentialFirefoxNavigation(t *testing.T)  { testDifferentialNavigation(t, "firefox") }

func testDifferentialNavigation(t *testing.T, browser string) {
	d := newDesk(t)
	if browser == "chromium" {
		d.chromium("nav.html")
	} else {
		d.firefox("nav.html")
	}
	loaded := func(o *aci.Observation) bool {
		doc := find(o, "document web", "Shinken navigation")
		return doc != nil && !hasState(doc, "busy") && ref(o, "push button", "Next page") != ""
	}
	obs := d.observe("the navigation page", loaded)
	base := find(obs, "document web", "Shinken navigation").Value
	if !strings.HasPrefix(base, "file://") || !strings.HasSuffix(base, "/nav.html") {
		t.Fatalf("the document's value is %q, want its file:// URL", base)
	}
	d.agree("the start")
	n := 0
	// step clicks the button named label and checks that the first look
	// after it shows url as the document's value.
	step := func(i int, label, url string) *aci.Observation {
		t.Helper()
		if err := d.c.Click(ctxT(t), aci.Ref(ref(obs, "push button", label))); err != nil {
			t.Fatalf("round %d: click %s: %v", i, label, err)
		}
		o := d.look()
		if doc := find(o, "document web", "Shinken navigation"); doc == nil || doc.Value != url {
			t.Fatalf("round %d: the first look after %s does not show the URL %q:\n%s", i, label, url, o.TreeText)
		}
		d.agree(fmt.Sprintf("round %d's %s to %s", i, label, url))
		return o
	}
	page := base // the URL without its fragment
	for i := range rounds {
		n++
		step(i, "Anchor", fmt.Sprintf("%s#h%d", page, n))
		n++
		page = fmt.Sprintf("%s?pushed=%d", base, n)
		step(i, "Push", page)
		n++
		page = fmt.Sprintf("%s?page=%d", base, n)
		obs = step(i, "Next page", page)
		if !loaded(obs) {
			obs = d.observe("the next page", loaded)
		}
	}
}
