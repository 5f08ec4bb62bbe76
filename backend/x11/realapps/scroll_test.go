package realapps

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/shinken/aci"
)

// TestChromiumScrollThenClick scrolls a long list in Chromium by ref, 5
// notches at a time, rounds times: the first look after each scroll's ack
// places the items where they stay once the page is still, and a click by
// ref on the middle item that look shows takes that item.
func TestChromiumScrollThenClick(t *testing.T) {
	d := newDesk(t)
	d.chromium("choices.html")
	obs := d.observe("the choices page", func(o *aci.Observation) bool {
		doc := find(o, "document web", "Shinken choices")
		return doc != nil && !hasState(doc, "busy") && ref(o, "list", "Items") != "" && ref(o, "push button", "Item 1") != ""
	})
	list := ref(obs, "list", "Items")
	for i := range rounds {
		ctx := ctxT(t)
		dy := 5.0
		if i%8 >= 4 {
			dy = -5
		}
		if err := d.c.Scroll(ctx, aci.Ref(list), 0, dy); err != nil {
			t.Fatalf("round %d: scroll: %v", i, err)
		}
		first := d.look()
		d.agree(fmt.Sprintf("round %d's scroll", i))
		still := d.look()
		var visible []aci.Element
		for _, e := range first.Elements {
			if e.Role != "push button" || !strings.HasPrefix(e.Name, "Item ") {
				continue
			}
			s := element(still, e.Ref)
			if s == nil || !slices.Equal(s.BBox, e.BBox) {
				t.Fatalf("round %d: the first look after the scroll put %q at %v; once still it is at %v", i, e.Name, e.BBox, s)
			}
			if shown(first, e.Role, e.Name) != "" {
				visible = append(visible, e)
			}
		}
		if len(visible) < 3 {
			t.Fatalf("round %d: fewer than 3 items visible after the scroll:\n%s", i, first.TreeText)
		}
		item := visible[len(visible)/2]
		if err := d.c.Click(ctx, aci.Ref(item.Ref)); err != nil {
			t.Fatalf("round %d: click %q: %v", i, item.Name, err)
		}
		if o := d.look(); !strings.Contains(o.TreeText, `"Clicked `+item.Name+`"`) {
			t.Fatalf("round %d: clicked %q by ref, the first look shows:\n%s", i, item.Name, o.TreeText)
		}
	}
}

// TestDifferentialChromiumScrollBack scrolls Chromium's long list down and
// back up, rounds times: after each scroll the mirror equals a fresh read, and
// the scroll down moved the highest item visible. Chromium turns the items
// it scrolled out hidden and shows them again as they come back, with no
// event either way. (That the first look after a scroll's ack shows it is
// TestChromiumScrollThenClick's.)
func TestDifferentialChromiumScrollBack(t *testing.T) {
	d := newDesk(t)
	d.chromium("choices.html")
	d.observe("the choices page", func(o *aci.Observation) bool {
		doc := find(o, "document web", "Shinken choices")
		return doc != nil && !hasState(doc, "busy") && ref(o, "list", "Items") != "" && shown(o, "push button", "Item 1") != ""
	})
	d.agree("the start")
	obs := d.look()
	list := ref(obs, "list", "Items")
	// highest is the first item the look shows visible.
	highest := func(o *aci.Observation) string {
		for _, e := range o.Elements {
			if e.Role == "push button" && strings.HasPrefix(e.Name, "Item ") && shown(o, e.Role, e.Name) != "" {
				return e.Name
			}
		}
		return ""
	}
	for i := range rounds {
		ctx := ctxT(t)
		top := highest(d.look())
		if top == "" {
			t.Fatalf("round %d: no item visible before the scroll:\n%s", i, d.look().TreeText)
		}
		notches := 5 + i%3*5
		if err := d.c.Scroll(ctx, aci.Ref(list), 0, float64(notches)); err != nil {
			t.Fatalf("round %d: scroll down: %v", i, err)
		}
		d.agree(fmt.Sprintf("round %d's scroll down by %d", i, notches))
		down := d.look()
		if h := highest(down); h == top {
			t.Fatalf("round %d: %q is still the highest item visible after scrolling down:\n%s", i, h, down.TreeText)
		}
		if err := d.c.Scroll(ctx, aci.Ref(list), 0, -float64(notches)); err != nil {
			t.Fatalf("round %d: scroll up: %v", i, err)
		}
		d.agree(fmt.Sprintf("round %d's scroll up by %d", i, notches))
	}
}
