package client_test

import (
	"context"
	"errors"
	"image"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// locRig serves b, with feed (may be nil), through a schema-checking proxy
// and returns a client connected to it.
func locRig(t testing.TB, b shinken.Backend, feed *shinken.Feed) *client.Client {
	t.Helper()
	return schematest.Serve(t, b, &shinken.RuntimeOptions{Feed: feed})
}

func launched(t testing.TB, apps ...string) *headless.Desktop {
	t.Helper()
	d := headless.New(nil)
	for _, app := range apps {
		if err := d.Launch(t.Context(), app, nil); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestLocatorStrict: a locator that matches two elements refuses at once,
// naming both; Nth, First and Last pick one, Count and All count them.
func TestLocatorStrict(t *testing.T) {
	c := locRig(t, launched(t, "form"), nil)
	ctx := t.Context()
	start := time.Now()
	err := c.ByRole("", "Name").Click(ctx)
	if !errors.Is(err, client.ErrStrict) {
		t.Fatalf("two matches: %v", err)
	}
	if want := `shinken: click: element "Name": 2 elements match: e2 label "Name"; e3 text "Name"`; err.Error() != want {
		t.Errorf("error:\n%s\nwant\n%s", err, want)
	}
	if d := time.Since(start); d >= client.DefaultLocatorTimeout {
		t.Errorf("a strict refusal waited %v", d)
	}

	texts := c.ByRole("frame", "Form").ByRole("text", "")
	if _, err := texts.Value(ctx); !errors.Is(err, client.ErrStrict) {
		t.Errorf("two texts in the frame: %v", err)
	}
	if n, err := texts.Count(ctx); n != 2 || err != nil {
		t.Errorf("Count = %d, %v", n, err)
	}
	all, err := texts.All(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("All: %v, %v", all, err)
	}
	for i, want := range []string{"Name", "Email"} {
		if got, err := all[i].Text(ctx); got != want || err != nil {
			t.Errorf("All[%d].Text = %q, %v", i, got, err)
		}
	}
	if got, _ := texts.First().Text(ctx); got != "Name" {
		t.Errorf("First: %q", got)
	}
	if got, _ := texts.Last().Text(ctx); got != "Email" {
		t.Errorf("Last: %q", got)
	}
	// The scope's own element is not in its subtree.
	if n, _ := c.ByRole("frame", "Form").ByRole("frame", "").Count(ctx); n != 0 {
		t.Errorf("the frame counts itself: %d", n)
	}
}

// TestLocatorMatch: a name equal, containing, or matching a regexp; a
// value; states; and a By that asks two things of the name is refused.
func TestLocatorMatch(t *testing.T) {
	c := locRig(t, launched(t, "form"), nil)
	ctx := t.Context()
	if err := c.ByRole("text", "Name").Fill(ctx, "Ada"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		by   client.By
		want int
	}{
		{client.By{Role: "text", Name: "Nam"}, 0},
		{client.By{Role: "text", NameContains: "Nam"}, 1},
		{client.By{NameContains: "Name"}, 2},
		{client.By{Role: "label", NameRegexp: regexp.MustCompile(`^(Name|Email)$`)}, 2},
		{client.By{Role: "text", Value: "Ada"}, 1},
		{client.By{Role: "text", States: []string{"editable", "focused"}}, 1},
		{client.By{States: []string{"checked"}}, 0},
	} {
		if n, err := c.Locate(tt.by).Count(ctx); n != tt.want || err != nil {
			t.Errorf("%+v: %d, %v; want %d", tt.by, n, err, tt.want)
		}
	}
	_, err := c.Locate(client.By{Name: "Name", NameContains: "Na"}).Count(ctx)
	if err == nil || !strings.Contains(err.Error(), "more than one of Name, NameContains and NameRegexp") {
		t.Errorf("two rules for the name: %v", err)
	}
}

// TestLocatorNoMatch: nothing matches, and the error says so after the
// timeout, naming the closest elements.
func TestLocatorNoMatch(t *testing.T) {
	c := locRig(t, launched(t, "form"), nil)
	err := c.ByRole("push button", "Sumbit").WithTimeout(200 * time.Millisecond).Click(t.Context())
	if !errors.Is(err, aci.ErrTimeout) || !errors.Is(err, aci.ErrNoMatch) {
		t.Fatalf("no match: %v", err)
	}
	want := regexp.MustCompile(`^shinken: click: push button "Sumbit": no element matches; closest: e7 push button "Submit" after \d+ ms$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("error: %s", err)
	}
	_, err = c.ByRole("text", "mail").WithTimeout(100 * time.Millisecond).Text(t.Context())
	if err == nil || !strings.Contains(err.Error(), `closest: e5 text "Email"; e3 text "Name"; e4 label "Email"`) {
		t.Errorf("closest by name, then role: %v", err)
	}
}

// gated is a headless desktop with a window holding a disabled button,
// Go, that counts its clicks.
func gated(t *testing.T) (*headless.Desktop, *headless.Button, *atomic.Int32) {
	d := headless.New(nil)
	var clicks atomic.Int32
	var button *headless.Button
	d.Register("gate", func(w *headless.Window) {
		w.SetTitle("Gate")
		button = w.AddButton("Go", func() { clicks.Add(1) })
		button.SetEnabled(false)
	})
	if err := d.Launch(t.Context(), "gate", nil); err != nil {
		t.Fatal(err)
	}
	return d, button, &clicks
}

// TestLocatorWaitsUntilEnabled: a click on a disabled button waits, and
// clicks once the button is enabled; when it never is, the error says
// what was missing.
func TestLocatorWaitsUntilEnabled(t *testing.T) {
	d, button, clicks := gated(t)
	feed := shinken.NewFeed()
	c := locRig(t, d, feed)
	ctx := t.Context()

	err := c.ByRole("push button", "Go").WithTimeout(300 * time.Millisecond).Click(ctx)
	if !errors.Is(err, aci.ErrTimeout) || !regexp.MustCompile(`^shinken: click: push button "Go" is not enabled after \d+ ms$`).MatchString(err.Error()) {
		t.Fatalf("a disabled button: %v", err)
	}

	sub := feed.Subscribe(64, shinken.EventObservation)
	defer sub.Close()
	done := make(chan error, 1)
	go func() { done <- c.ByRole("push button", "Go").Click(ctx) }()
	<-sub.Events() // the locator has looked, and seen it disabled
	if clicks.Load() != 0 {
		t.Fatal("clicked a disabled button")
	}
	button.SetEnabled(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := clicks.Load(); n != 1 {
		t.Fatalf("%d clicks, want 1", n)
	}
	if err := c.ByRole("push button", "Go").Hover(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLocatorCheck: Check and Uncheck are idempotent, and expectations see
// what they did.
func TestLocatorCheck(t *testing.T) {
	c := locRig(t, launched(t, "form"), nil)
	ctx := t.Context()
	box := c.ByRole("check box", "Subscribe to the newsletter")
	for range 2 {
		if err := box.Check(ctx); err != nil {
			t.Fatal(err)
		}
		if err := box.Expect().ToBeChecked(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := box.Uncheck(ctx); err != nil {
			t.Fatal(err)
		}
		if err := box.Expect().Not().ToBeChecked(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// refusing is a headless desktop whose elements take no value (set_value
// is refused as an unknown action) and whose first n element actions fail
// as stale.
type refusing struct {
	*headless.Desktop
	stale    atomic.Int32
	setValue atomic.Int32
}

func (r *refusing) Perform(ctx context.Context, id string, act shinken.ElementAction) error {
	if r.stale.Add(-1) >= 0 {
		return aci.ErrStaleElementRef
	}
	if act.Op == shinken.OpSetValue {
		r.setValue.Add(1)
		return aci.ErrNoSuchAction
	}
	return r.Desktop.Perform(ctx, id, act)
}

// TestLocatorFill: Fill sets the value where set_value works, types it
// where set_value is refused, and tries once more when the element went
// stale between the look and the action, but not twice.
func TestLocatorFill(t *testing.T) {
	ctx := t.Context()
	t.Run("set_value", func(t *testing.T) {
		c := locRig(t, launched(t, "form"), nil)
		name := c.ByRole("text", "Name")
		for _, v := range []string{"Ada", "Grace", ""} {
			if err := name.Fill(ctx, v); err != nil {
				t.Fatal(err)
			}
			if err := name.Expect().ToHaveValue(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("typed", func(t *testing.T) {
		r := &refusing{Desktop: launched(t, "form")}
		c := locRig(t, r, nil)
		email := c.ByRole("text", "Email")
		for _, v := range []string{"ada@example.com", "grace@example.com", ""} {
			if err := email.Fill(ctx, v); err != nil {
				t.Fatal(err)
			}
			if err := email.Expect().ToHaveValue(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		if r.setValue.Load() != 3 {
			t.Errorf("set_value tried %d times, want 3", r.setValue.Load())
		}
	})
	t.Run("stale once", func(t *testing.T) {
		r := &refusing{Desktop: launched(t, "form")}
		r.stale.Store(1)
		c := locRig(t, r, nil)
		if err := c.ByRole("text", "Email").Fill(ctx, "ada@example.com"); err != nil {
			t.Fatal(err)
		}
		if err := c.ByRole("text", "Email").Expect().ToHaveValue(ctx, "ada@example.com"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("stale twice", func(t *testing.T) {
		r := &refusing{Desktop: launched(t, "form")}
		r.stale.Store(2)
		c := locRig(t, r, nil)
		err := c.ByRole("text", "Email").Fill(ctx, "ada@example.com")
		var le *client.LocatorError
		if !errors.Is(err, aci.ErrStaleElementRef) || !errors.As(err, &le) || le.Op != "fill" {
			t.Fatalf("stale twice: %v", err)
		}
	})
}

// TestLocatorSelectOption chooses a combo box's option through its pop-up
// list, with the pointer, as a person does.
func TestLocatorSelectOption(t *testing.T) {
	feed := shinken.NewFeed()
	c := locRig(t, launched(t, "settings"), feed)
	sub := feed.Subscribe(256, shinken.EventAction)
	defer sub.Close()
	ctx := t.Context()
	lang := c.ByRole("combo box", "Language")
	for _, option := range []string{"Deutsch", "日本語", "English"} {
		if err := lang.SelectOption(ctx, option); err != nil {
			t.Fatal(err)
		}
		if err := lang.Expect().ToHaveValue(ctx, option); err != nil {
			t.Fatal(err)
		}
		if err := c.ByRole("menu item", option).Expect().ToBeHidden(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for {
		select {
		case e := <-sub.Events():
			if e.Verb == aci.VerbSetValue {
				t.Fatalf("chose by set_value, not through the pop-up: %+v", e)
			}
			continue
		default:
		}
		break
	}
}

// TestLocatorScrollIntoView scrolls a permission's check box into its
// scroll view, then checks it.
func TestLocatorScrollIntoView(t *testing.T) {
	c := locRig(t, launched(t, "settings"), nil)
	ctx := t.Context()
	box := c.ByRole("check box", "Bluetooth")
	if err := box.Expect().Not().ToBeVisible(ctx); err != nil {
		t.Fatal(err)
	}
	if err := box.ScrollIntoView(ctx); err != nil {
		t.Fatal(err)
	}
	if err := box.Expect().ToBeVisible(ctx); err != nil {
		t.Fatal(err)
	}
	if err := box.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := box.Expect().ToBeChecked(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestExpectFailure: an expectation that does not hold says what was
// expected, what was seen, and the tree around it.
func TestExpectFailure(t *testing.T) {
	c := locRig(t, launched(t, "form"), nil)
	ctx := t.Context()
	err := c.ByRole("text", "Email").WithTimeout(200*time.Millisecond).Expect().ToHaveValue(ctx, "ada@example.com")
	var xe *client.ExpectError
	if !errors.As(err, &xe) || !errors.Is(err, aci.ErrTimeout) {
		t.Fatalf("%T %v", err, err)
	}
	if xe.Expected != `to have value "ada@example.com"` || !strings.HasPrefix(xe.LastSeen, `e5 text "Email" [`) {
		t.Errorf("expected %q, last seen %q", xe.Expected, xe.LastSeen)
	}
	if !strings.Contains(xe.Tree, `→   e5 text "Email"`) || !strings.Contains(xe.Tree, `e3 text (focused) "Name"`) {
		t.Errorf("tree:\n%s", xe.Tree)
	}
	if err := c.ByRole("text", "Email").Expect().Not().ToHaveValue(ctx, "x"); err != nil {
		t.Error(err)
	}
	if err := c.ByRole("text", "").Expect().ToHaveCount(ctx, 2); err != nil {
		t.Error(err)
	}
	err = c.ByRole("text", "").Expect().ToBeEnabled(ctx)
	if !errors.Is(err, client.ErrStrict) || !strings.Contains(err.Error(), `2 elements match: e3 text "Name"; e5 text "Email"`) {
		t.Errorf("strict: %v", err)
	}
	if err := c.ByRole("push button", "Cancel").Expect().ToBeHidden(ctx); err != nil {
		t.Error(err)
	}
	if err := c.ByRole("push button", "Submit").Expect().ToHaveState(ctx, "focusable"); err != nil {
		t.Error(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.ByRole("push button", "Submit").Expect().ToBeVisible(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestLocatorPress presses Return in an entry, which clicks the form's
// Submit button.
func TestLocatorPress(t *testing.T) {
	c := locRig(t, launched(t, "settings"), nil)
	ctx := t.Context()
	if err := c.ByRole("password text", "Password").Fill(ctx, "secret"); err != nil {
		t.Fatal(err)
	}
	if err := c.ByRole("text", "Username").Press(ctx, "Return"); err != nil {
		t.Fatal(err)
	}
	status := c.Locate(client.By{Role: "label", NameContains: "Saved: nobody"})
	if err := status.Expect().ToBeVisible(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLocatorPointer: hover, double-click, right-click and drag put the
// pointer on their elements, the drag ending on the second.
func TestLocatorPointer(t *testing.T) {
	c := locRig(t, launched(t, "form"), nil)
	ctx := t.Context()
	name, email := c.ByRole("text", "Name"), c.ByRole("text", "Email")
	pointerIn := func(what string, l *client.Locator) {
		t.Helper()
		box, err := l.Box(ctx)
		if err != nil {
			t.Fatal(err)
		}
		shot, err := c.Screenshot(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if shot.Pointer == nil || !shot.Pointer.In(box) {
			t.Errorf("after %s the pointer is at %v, not in %v", what, shot.Pointer, box)
		}
	}
	if err := name.Hover(ctx); err != nil {
		t.Fatal(err)
	}
	pointerIn("hover", name)
	if err := email.DoubleClick(ctx); err != nil {
		t.Fatal(err)
	}
	pointerIn("double-click", email)
	if err := name.RightClick(ctx); err != nil {
		t.Fatal(err)
	}
	pointerIn("right-click", name)
	if err := name.DragTo(ctx, email); err != nil {
		t.Fatal(err)
	}
	pointerIn("drag", email)
	if err := email.DragTo(ctx, c.ByRole("push button", "Nowhere").WithTimeout(100*time.Millisecond)); !errors.Is(err, aci.ErrNoMatch) {
		t.Errorf("a drag onto nothing: %v", err)
	}
}

// TestLocatorWindowScope: by default a locator looks in the active
// application; InWindow looks in one window, OnDesktop in every one.
func TestLocatorWindowScope(t *testing.T) {
	c := locRig(t, launched(t, "form", "notes"), nil) // notes is active
	ctx := t.Context()
	ws, err := c.ListWindows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var form uint64
	for _, w := range ws {
		if w.Title == "Form" {
			form = w.ID
		}
	}
	if form == 0 {
		t.Fatalf("no Form window in %+v", ws)
	}
	name := c.ByRole("text", "Name")
	if n, err := name.Count(ctx); n != 0 || err != nil {
		t.Errorf("the inactive form's field counted in the active app: %d, %v", n, err)
	}
	for _, l := range []*client.Locator{name.InWindow(form), name.OnDesktop()} {
		if n, err := l.Count(ctx); n != 1 || err != nil {
			t.Errorf("%s: %d, %v", l, n, err)
		}
	}
	if err := name.InWindow(form).Fill(ctx, "Ada"); err != nil {
		t.Fatal(err)
	}
	if err := name.OnDesktop().Expect().ToHaveValue(ctx, "Ada"); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.ByRole("text", "Note").InWindow(form).Count(ctx); n != 0 {
		t.Errorf("the notes' field counted in the form's window: %d", n)
	}
}

// moving is a headless desktop whose Submit button reads a pixel further
// right in each of its next snapshots, as a widget sliding into place does.
type moving struct {
	*headless.Desktop
	moves atomic.Int32
}

func (m *moving) Snapshot(ctx context.Context, opts shinken.SnapshotOptions) (*shinken.Tree, error) {
	tree, err := m.Desktop.Snapshot(ctx, opts)
	if err != nil {
		return nil, err
	}
	if n := m.moves.Add(-1); n >= 0 {
		for i := range tree.Nodes {
			if tree.Nodes[i].Name == "Submit" {
				tree.Nodes[i].BBox = tree.Nodes[i].BBox.Add(image.Pt(int(n%2)+1, 0))
			}
		}
	}
	return tree, nil
}

// TestLocatorWaitsUntilStable: a click waits until its element's box is
// the same in two reads in a row; when it keeps moving, the error says so.
func TestLocatorWaitsUntilStable(t *testing.T) {
	ctx := t.Context()
	m := &moving{Desktop: launched(t, "form")}
	m.moves.Store(5)
	c := locRig(t, m, nil)
	if err := c.ByRole("push button", "Submit").Click(ctx); err != nil {
		t.Fatal(err)
	}
	if n := m.moves.Load(); n >= 0 {
		t.Errorf("clicked while the button still moved (%d moves left)", n+1)
	}
	if err := c.ByRole("label", "Please enter a name.").Expect().ToBeVisible(ctx); err != nil {
		t.Fatal(err)
	}

	m.moves.Store(1 << 20)
	err := c.ByRole("push button", "Submit").WithTimeout(300 * time.Millisecond).Click(ctx)
	if !errors.Is(err, aci.ErrTimeout) || !strings.Contains(err.Error(), `push button "Submit" is not stable (its box moves) after`) {
		t.Fatalf("a button that keeps moving: %v", err)
	}
}

// TestLocatorUnderPopup clicks a radio button that a pop-up left open
// hides: the click would land on the pop-up's item (and choose it), so the
// locator closes the pop-up with Escape first, as a person does. A browser
// leaves such a pop-up open after a field is typed in: its suggestions.
func TestLocatorUnderPopup(t *testing.T) {
	feed := shinken.NewFeed()
	c := locRig(t, launched(t, "settings"), feed)
	sub := feed.Subscribe(256, shinken.EventAction)
	defer sub.Close()
	ctx := t.Context()
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	lang, err := obs.Find("combo box", "Language")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Click(ctx, aci.Ref(lang.Ref)); err != nil {
		t.Fatal(err)
	}
	item := c.ByRole("menu item", "Deutsch")
	if err := item.Expect().ToBeVisible(ctx); err != nil {
		t.Fatal(err)
	}
	dark := c.ByRole("radio button", "Dark")
	at, err := dark.Box(ctx)
	if err != nil {
		t.Fatal(err)
	}
	over, err := item.Box(ctx)
	if err != nil {
		t.Fatal(err)
	}
	centre := image.Pt((at.Min.X+at.Max.X)/2, (at.Min.Y+at.Max.Y)/2)
	if !centre.In(over) {
		t.Fatalf("the pop-up's item %v does not hide the radio button's centre %v: the test shows nothing", over, centre)
	}
	if err := dark.Click(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dark.Expect().ToBeChecked(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.ByRole("combo box", "Language").Expect().ToHaveValue(ctx, "English"); err != nil {
		t.Fatal(err)
	}
	keys := 0 // the test presses none: any is the locator's Escape
	for len(sub.Events()) > 0 {
		if e := <-sub.Events(); e.Verb == aci.VerbKey {
			keys++
		}
	}
	if keys != 1 {
		t.Errorf("%d keys pressed, want one (Escape)", keys)
	}
}
