package settled

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken/aci"
)

const pageA = `<!doctype html>
<html><head><meta charset="utf-8"><title>settle page A</title>
<style>body{font:16px sans-serif;margin:40px} label{display:block;margin:20px 0}
input{width:24px;height:24px} a{font-size:24px}</style></head>
<body><h1>Page A</h1>
<label><input type="checkbox" id="box"> Accept the terms</label>
<p><a href="b.html">Go to page B</a></p>
</body></html>`

const pageB = `<!doctype html>
<html><head><meta charset="utf-8"><title>settle page B</title>
<style>body{font:16px sans-serif;margin:40px} a{font-size:24px}</style></head>
<body><h1>Page B</h1>
<p><a href="a.html">Back to page A</a></p>
</body></html>`

// site writes the local site, pages A and B, and returns its folder.
func site(t testing.TB) string {
	dir := t.TempDir()
	for name, page := range map[string]string{"a.html": pageA, "b.html": pageB} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// chromium starts Chromium on page A of a local site, with its
// accessibility tree exposed, and returns the rig.
func chromium(t testing.TB) *rig {
	r := newRig(t, true)
	dir := site(t)
	r.sess.Launch(t, "chromium", "--no-sandbox", "--no-first-run", "--no-default-browser-check",
		"--disable-gpu", "--force-renderer-accessibility", "--disable-features=Translate",
		"--password-store=basic", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-position=0,0", "--window-size=1000,700", "file://"+filepath.Join(dir, "a.html"))
	return r
}

// firefox starts Firefox on page A of a local site, with a new profile,
// and returns the rig.
func firefox(t testing.TB) *rig {
	r := newRig(t, true)
	dir := site(t)
	profile := atspitest.FirefoxProfile(t)
	r.sess.LaunchEnv(t, []string{"MOZ_CRASHREPORTER_DISABLE=1", "GNOME_ACCESSIBILITY=1"}, "firefox-esr",
		"--no-remote", "--new-instance", "--profile", profile, "--width", "1000", "--height", "700",
		"file://"+filepath.Join(dir, "a.html"))
	return r
}

// TestChromiumCheckboxThenObserve clicks a checkbox on a page and
// observes at once: the tree reads the new state, every time.
func TestChromiumCheckboxThenObserve(t *testing.T) { checkboxThenObserve(t, chromium(t)) }

// TestChromiumCheckboxThenScreenshot clicks the checkbox and takes a
// screenshot at once: it differs from the one before, every time.
func TestChromiumCheckboxThenScreenshot(t *testing.T) { checkboxThenScreenshot(t, chromium(t)) }

// TestChromiumLinkThenObserve follows a link to another page and back,
// observing at once: the tree shows the page the link led to, every time.
func TestChromiumLinkThenObserve(t *testing.T) { linkThenObserve(t, chromium(t)) }

// TestFirefoxCheckboxThenObserve is TestChromiumCheckboxThenObserve with
// Firefox.
func TestFirefoxCheckboxThenObserve(t *testing.T) { checkboxThenObserve(t, firefox(t)) }

// TestFirefoxCheckboxThenScreenshot is TestChromiumCheckboxThenScreenshot
// with Firefox.
func TestFirefoxCheckboxThenScreenshot(t *testing.T) { checkboxThenScreenshot(t, firefox(t)) }

func checkboxThenObserve(t *testing.T, r *rig) {
	_, box := r.waitElement("check box", "Accept the terms")
	checked := has(box.States, "checked")
	r.takeSettles()
	for i := range rounds {
		box, _ = r.stillAt(box)
		r.clickAt(box)
		checked = !checked
		got := find(r.observe(), "check box", "Accept the terms")
		if got == nil || has(got.States, "checked") != checked {
			t.Fatalf("round %d: the checkbox reads %v, want checked=%v (stale); %s", i, got, checked, r.later("check box", "Accept the terms"))
		}
	}
	t.Log(summary(r.takeSettles()))
}

func checkboxThenScreenshot(t *testing.T, r *rig) {
	_, box := r.waitElement("check box", "Accept the terms")
	prev := r.shot().Hash
	r.takeSettles()
	for i := range rounds {
		var moved bool
		if box, moved = r.stillAt(box); moved {
			prev = r.shot().Hash
		}
		r.clickAt(box)
		s := r.shot()
		if s.Hash == prev {
			time.Sleep(500 * time.Millisecond) // diagnosis of a failure only
			t.Fatalf("round %d: the screenshot after the click shows the old pixels (stale); half a second later the pixels differ: %v, and the box reads %v",
				i, r.shot().Hash != prev, find(r.observe(), "check box", "Accept the terms").States)
		}
		prev = s.Hash
	}
	t.Log(summary(r.takeSettles()))
}

func linkThenObserve(t *testing.T, r *rig) {
	r.waitElement("link", "Go to page B")
	r.takeSettles()
	for i := range rounds {
		from, to, heading := "Go to page B", "Back to page A", "Page B"
		if i%2 == 1 {
			from, to, heading = "Back to page A", "Go to page B", "Page A"
		}
		o := r.observe()
		link := find(o, "link", from)
		if link == nil {
			t.Fatalf("round %d: no link %q:\n%s", i, from, o.TreeText)
		}
		r.clickAt(link)
		o = r.observe()
		if find(o, "link", to) == nil || find(o, "heading", heading) == nil {
			t.Fatalf("round %d: after following %q the tree shows no %q (stale) but %s; %s", i, from, heading, pageState(o), r.lateBy("heading", heading))
		}
	}
	t.Log(summary(r.takeSettles()))
}

// pageState describes the documents and headings of o.
func pageState(o *aci.Observation) string {
	var parts []string
	for _, e := range o.Elements {
		if e.Role == "document web" || e.Role == "heading" {
			parts = append(parts, fmt.Sprintf("%s %q %v", e.Role, e.Name, e.States))
		}
	}
	return strings.Join(parts, ", ")
}

// TestFirefoxLinkThenObserve is TestChromiumLinkThenObserve with Firefox.
func TestFirefoxLinkThenObserve(t *testing.T) { linkThenObserve(t, firefox(t)) }
