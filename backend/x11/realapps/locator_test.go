package realapps

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken/client"
)

// The same locator code drives each real application: by role and name,
// acting then expecting, with no observation, ref or sleep of the test's
// own. Each test runs locatorRounds rounds.

// locatorRounds is how many rounds each locator test runs: 6 by default
// (each option chosen twice, the box checked and unchecked three times,
// Firefox's suggestions over the select from the second round on),
// SHINKEN_LOCATOR_ROUNDS for more (20 under ./scripts/stress, to look for
// what load breaks).
var locatorRounds = func() int {
	if n, err := strconv.Atoi(os.Getenv("SHINKEN_LOCATOR_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 6
}()

// by returns a locator of d's desktop waiting as long as the tests wait for
// an application.
func (d *desk) by(role, name string) *client.Locator {
	return d.c.ByRole(role, name).WithTimeout(waitFor)
}

// started is how long a test waits for an application to start: a hang
// guard, minutes, since a browser's first start on a loaded machine takes
// more than the half minute an application gets to answer an action.
const started = 3 * time.Minute

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestLocatorsZenity fills zenity's form and chooses its combo box's
// options through the pop-up list (selectThroughPopup checks the calls
// made), then presses OK.
func TestLocatorsZenity(t *testing.T) {
	d := newDesk(t)
	app := d.sess.Launch(t, "zenity", "--forms", "--title=Order", "--text=Your order",
		"--add-entry=Name", "--add-entry=Email", "--add-password=Secret",
		"--add-combo=Colour", "--combo-values=Red|Green|Blue")
	ctx := t.Context() // each locator waits at most waitFor
	name, colour := d.by("text", "Name"), d.by("combo box", "")
	options := []string{"Green", "Blue", "Red"}
	for i := range locatorRounds {
		v := fmt.Sprintf("Ada %d", i)
		must(t, "fill", name.Fill(ctx, v))
		must(t, "expect the name", name.Expect().ToHaveValue(ctx, v))
		option := options[i%len(options)]
		if seen := d.selectThroughPopup(t, colour, option); i == 0 {
			t.Logf("chosen through the pop-up: %s", seen)
		}
		must(t, "expect the colour", colour.Expect().ToHaveText(ctx, option))
	}
	must(t, "fill the email", d.by("text", "Email").Fill(ctx, "ada@example.com"))
	must(t, "fill the secret", d.by("password text", "Secret").Fill(ctx, "s3cret"))
	must(t, "select", colour.SelectOption(ctx, "Blue"))
	must(t, "click OK", d.by("push button", "OK").Click(ctx))
	select {
	case <-app.Done():
	case <-time.After(waitFor):
		t.Fatal("zenity did not exit after OK")
	}
	want := fmt.Sprintf("Ada %d|ada@example.com|s3cret|Blue\n", locatorRounds-1)
	if got := app.Stdout(); got != want {
		t.Fatalf("zenity printed %q, want %q", got, want)
	}
}

// TestLocatorsGtk3Demo switches gtk3-demo's notebook between its tabs.
func TestLocatorsGtk3Demo(t *testing.T) {
	d := newDesk(t)
	d.sess.Launch(t, "gtk3-demo")
	ctx := t.Context() // each locator waits at most waitFor
	must(t, "gtk3-demo's start", d.by("page tab", "Source").WithTimeout(started).Expect().ToBeVisible(ctx))
	for i := range locatorRounds {
		tab := d.by("page tab", []string{"Source", "Info"}[i%2])
		must(t, "click the tab", tab.Click(ctx))
		must(t, "expect it selected", tab.Expect().ToHaveState(ctx, "selected"))
	}
}

func TestLocatorsChromium(t *testing.T) { testLocatorsBrowser(t, "chromium") }
func TestLocatorsFirefox(t *testing.T)  { testLocatorsBrowser(t, "firefox") }

// testLocatorsBrowser fills the form page, chooses in its select's pop-up
// (selectThroughPopup checks the calls made), checks and unchecks a box,
// sends, and expects the status line. From the second round, Firefox
// lists the address sent before under the Email field just typed in, over
// the Colour box: SelectOption closes that list (Escape) before its click.
func testLocatorsBrowser(t *testing.T, browser string) {
	d := newDesk(t)
	if browser == "chromium" {
		d.chromium("form.html")
	} else {
		d.firefox("form.html")
	}
	ctx := t.Context() // each locator waits at most waitFor
	// Loaded: the Send button shows, the document is no longer busy.
	must(t, "the page's load", d.by("push button", "Send").WithTimeout(started).Expect().ToBeVisible(ctx))
	must(t, "the page's load", d.by("document web", "Shinken form").WithTimeout(started).Expect().Not().ToHaveState(ctx, "busy"))
	options := []string{"Green", "Blue", "Red"}
	for i := range locatorRounds {
		name := fmt.Sprintf("Ada %d", i)
		must(t, "fill the name", d.by("entry", "Name").Fill(ctx, name))
		must(t, "fill the email", d.by("entry", "Email").Fill(ctx, "ada@example.com"))
		option := options[i%len(options)]
		if seen := d.selectThroughPopup(t, d.by("combo box", "Colour"), option); i == 0 {
			t.Logf("chosen through the pop-up: %s", seen)
		}
		gift, wrap := d.by("check box", "Gift wrap"), "gift"
		if i%2 == 0 {
			must(t, "check", gift.Check(ctx))
		} else {
			must(t, "uncheck", gift.Uncheck(ctx))
			wrap = "no gift"
		}
		must(t, "click Send", d.by("push button", "Send").Click(ctx))
		want := fmt.Sprintf("Sent: %s, ada@example.com, %s, %s, ", name, option, wrap)
		must(t, "expect the status", d.by("status bar", "").Expect().ToHaveText(ctx, strings.TrimSpace(want)))
	}
}

// TestLocatorsQt fills the Qt form, chooses in its combo box's pop-up list
// (selectThroughPopup checks the calls made), checks and unchecks a box,
// and submits.
func TestLocatorsQt(t *testing.T) {
	d := newDesk(t)
	app := d.qt("Qt form", "5")
	ctx := t.Context() // each locator waits at most waitFor
	name, colour, subscribe := d.by("text", "Name"), d.by("combo box", ""), d.by("check box", "Subscribe")
	options := []string{"Green", "Blue", "Red"}
	for i := range locatorRounds {
		v := fmt.Sprintf("Ada %d", i)
		must(t, "fill", name.Fill(ctx, v))
		must(t, "expect the name", name.Expect().ToHaveValue(ctx, v))
		option := options[i%len(options)]
		if seen := d.selectThroughPopup(t, colour, option); i == 0 {
			t.Logf("chosen through the pop-up: %s", seen)
		}
		must(t, "expect the colour", colour.Expect().ToHaveText(ctx, option))
		if i%2 == 0 {
			must(t, "check", subscribe.Check(ctx))
			must(t, "expect checked", subscribe.Expect().ToBeChecked(ctx))
		} else {
			must(t, "uncheck", subscribe.Uncheck(ctx))
			must(t, "expect unchecked", subscribe.Expect().Not().ToBeChecked(ctx))
		}
	}
	must(t, "fill the email", d.by("text", "Email").Fill(ctx, "ada@example.com"))
	must(t, "click Submit", d.by("push button", "Submit").Click(ctx))
	must(t, "expect submitted", d.by("label", "submitted").Expect().ToBeVisible(ctx))
	want := fmt.Sprintf("name=Ada %d\nemail=ada@example.com\ncolour=%s\ncount=0\nlevel=0\nsubscribe=False\nsize=small\n", locatorRounds-1, options[(locatorRounds-1)%len(options)])
	if got := app.Stdout(); got != want {
		t.Fatalf("the form printed %q, want %q", got, want)
	}
}
