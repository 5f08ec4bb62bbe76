package shinken_test

import (
	"context"
	"image"
	"strings"
	"testing"

	"shinken.dev/go/shinken"
)

// TestPopupItemsShown renders a menu three deep whose last items hang
// past the bottom of their small window, as override-redirect menus do:
// they are visible, not offscreen, while a label below the window is.
func TestPopupItemsShown(t *testing.T) {
	var nodes []shinken.Node
	add := func(parent int, role, name string, box image.Rectangle) int {
		depth := 0
		if parent >= 0 {
			depth = nodes[parent].Depth + 1
		}
		nodes = append(nodes, shinken.Node{ID: role + name, Parent: parent, Depth: depth, Role: role, Name: name,
			States: showing, Actions: []string{"click"}, BBox: box})
		return len(nodes) - 1
	}
	app := add(-1, "application", "menus", image.Rectangle{})
	frame := add(app, "frame", "Menus", image.Rect(0, 0, 300, 120))
	bar := add(frame, "menu bar", "", image.Rect(0, 0, 300, 20))
	file := add(bar, "menu", "File", image.Rect(0, 0, 40, 20))
	more := add(file, "menu", "More", image.Rect(0, 20, 100, 40))
	deeper := add(more, "menu", "Deeper", image.Rect(100, 40, 200, 60))
	add(deeper, "menu item", "Leaf 1", image.Rect(200, 110, 300, 130))
	add(deeper, "menu item", "Leaf 2", image.Rect(200, 130, 300, 150))
	add(frame, "label", "Below", image.Rect(0, 200, 100, 220))
	o := shinken.NewObserver(&staticTree{&shinken.Tree{Nodes: nodes}})
	obs, err := o.Observe(context.Background(), shinken.ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`menu item "Leaf 1"`, `menu item "Leaf 2"`, `menu "Deeper"`, `label (offscreen) "Below"`} {
		if !strings.Contains(obs.TreeText, want) {
			t.Errorf("tree_text lacks %q:\n%s", want, obs.TreeText)
		}
	}
}
