package realapps

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestChromiumCopyThenRead and TestFirefoxCopyThenRead set the clipboard,
// double-click a list item by ref (selecting a word of it, or the line
// break beside it), press ctrl+c
// and read the clipboard at once, rounds times: the read sees the copy,
// never the text set before it. The browser takes the clipboard after the
// key's settle may have ended, so the read waits for the owner change the
// copy key promised. (A triple click, a double_click then a click, is two
// actions: under load the second lands past the application's multi-click
// interval and clears the selection instead.)
func TestChromiumCopyThenRead(t *testing.T) {
	d := newDesk(t)
	d.chromium("form.html")
	copyThenRead(t, d)
}

func TestFirefoxCopyThenRead(t *testing.T) {
	d := newDesk(t)
	d.firefox("form.html")
	copyThenRead(t, d)
}

func copyThenRead(t *testing.T, d *desk) {
	obs := d.observe("the form", formReady)
	for i := range rounds {
		ctx := ctxT(t)
		name := fmt.Sprintf("Row %d", 1+i%3)
		item := treeRef(obs, `list item "`+name+`"`)
		if item == "" {
			t.Fatalf("round %d: no list item %q:\n%s", i, name, obs.TreeText)
		}
		before := fmt.Sprintf("before round %d", i)
		if err := d.c.ClipboardSet(ctx, before); err != nil {
			t.Fatalf("round %d: clipboard_set: %v", i, err)
		}
		if err := d.c.DoubleClick(ctx, aci.Ref(item)); err != nil {
			t.Fatalf("round %d: double_click %q: %v", i, name, err)
		}
		if err := d.c.Key(ctx, "ctrl+c"); err != nil {
			t.Fatalf("round %d: ctrl+c: %v", i, err)
		}
		got, err := d.c.ClipboardGet(ctx)
		if err != nil {
			t.Fatalf("round %d: clipboard_get: %v", i, err)
		}
		// The word under the pointer, or the line break beside it
		// (Chromium, when the item's middle is past its text).
		if w := strings.TrimSpace(got); got == before || w != "" && !slices.Contains(strings.Fields(name), w) {
			t.Fatalf("round %d: double-clicked %q and copied, the clipboard reads %q", i, name, got)
		}
		obs = d.look()
	}
}

// treeRef returns the ref of the first line of o's tree text that ends
// with what (a role and a quoted name), or "".
func treeRef(o *aci.Observation, what string) string {
	for _, l := range strings.Split(o.TreeText, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasSuffix(l, what) {
			return f[0]
		}
	}
	return ""
}
