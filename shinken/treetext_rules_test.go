package shinken_test

import (
	"context"
	"image"
	"strings"
	"testing"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// tiny builds a small tree for one rule: add appends a node under parent
// (-1 for a root) and returns its index.
type tiny struct{ nodes []shinken.Node }

func (b *tiny) add(parent int, role, name string, box image.Rectangle, states ...string) int {
	depth := 0
	if parent >= 0 {
		depth = b.nodes[parent].Depth + 1
	}
	if states == nil {
		states = showing
	}
	b.nodes = append(b.nodes, shinken.Node{ID: strings.Repeat("n", len(b.nodes)+1), Parent: parent, Depth: depth,
		Role: role, Name: name, States: states, BBox: box})
	return len(b.nodes) - 1
}

func box(x, y, w, h int) image.Rectangle { return image.Rect(x, y, x+w, y+h) }

// TestTreeTextRule renders, for each rule of tree_text (the package's
// treetext.go documents them), a tree that exercises that rule alone, and
// compares it with testdata/tree/rule-<name>.txt (-update rewrites them).
func TestTreeTextRule(t *testing.T) {
	win := box(0, 0, 400, 300)
	for _, c := range []struct {
		name string
		tree func(b *tiny) *shinken.Tree
	}{
		{"hidden-subtrees", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			p := b.add(w, "panel", "Hidden panel", win, "enabled", "sensitive")
			b.add(p, "push button", "Inside", box(1, 1, 10, 10))
			b.add(w, "push button", "Defunct", box(20, 1, 10, 10), "defunct")
			b.add(w, "push button", "Shown", box(40, 1, 10, 10))
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"combo-options-kept", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			cb := b.add(w, "combo box", "Size", box(10, 10, 80, 20))
			m := b.add(cb, "menu", "", image.Rectangle{}, "enabled", "sensitive")
			b.add(m, "menu item", "Small", image.Rectangle{}, "enabled", "sensitive")
			b.add(m, "menu item", "Large", image.Rectangle{}, "enabled", "sensitive")
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"common-actions", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			for i := range 20 {
				b.add(w, "push button", "B"+string(rune('a'+i)), box(10*i, 10, 10, 10))
			}
			for i := range b.nodes {
				b.nodes[i].Actions = []string{"doDefault", "showContextMenu"}
			}
			b.nodes[1].Actions = append(b.nodes[1].Actions, "press")
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"anonymous-containers", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			p := b.add(w, "panel", "", win)
			f := b.add(p, "filler", "", win)
			b.add(f, "push button", "Deep", box(10, 10, 10, 10))
			l := b.add(p, "list", "", box(0, 50, 100, 100))
			b.add(l, "list item", "Kept under its list", box(0, 50, 100, 20), "enabled", "showing", "selectable")
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"text-children", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			para := b.add(w, "paragraph", "", box(0, 0, 200, 20))
			b.add(para, "static", "Hello", box(0, 0, 50, 20))
			b.add(para, "static", " · ", box(50, 0, 10, 20))
			b.add(para, "static", "world", box(60, 0, 50, 20))
			link := b.add(w, "link", "More", box(0, 30, 50, 20))
			b.add(link, "static", "More", box(0, 30, 50, 20))
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"label-beside-control", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			row := b.add(w, "panel", "", box(0, 0, 300, 20))
			b.add(row, "label", "Email", box(0, 0, 50, 20))
			b.add(row, "entry", "Email", box(60, 0, 200, 20), "enabled", "sensitive", "showing", "editable")
			b.add(w, "label", "Standalone note", box(0, 40, 100, 20))
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"values", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			b.add(w, "table cell", "Tea", box(0, 0, 40, 20), "enabled", "showing", "selectable")
			b.add(w, "entry", "Name", box(0, 30, 100, 20), "enabled", "showing", "editable")
			b.add(w, "list item", "• Milk", box(0, 60, 100, 20), "enabled", "showing", "selectable")
			b.add(w, "static", "Sep", box(0, 90, 100, 20))
			b.nodes[1].Value = "Tea"                    // equal to the name: left out
			b.nodes[2].Value = "Ada\uFFFC"              // object replacement removed
			b.nodes[3].Value = "•"                      // punctuation: left out
			b.nodes[4].Value = strings.Repeat("x", 100) // cut
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"offscreen", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			doc := b.add(w, "document web", "Page", box(0, 50, 400, 250))
			b.add(doc, "push button", "Inside", box(10, 60, 50, 20))
			b.add(doc, "push button", "Edge", box(10, 290, 50, 20))
			b.add(doc, "push button", "Below", box(10, 400, 50, 20))
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"atspi-no-extents", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			tr := b.add(w, "tree table", "Files", box(0, 0, 400, 100))
			b.add(tr, "table cell", "visible.txt", box(0, 0, 400, 20), "enabled", "showing", "selectable")
			b.add(tr, "table cell", "scrolled-away.txt", image.Rectangle{}, "enabled", "showing", "selectable")
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes, Source: aci.SourceATSPI}
		}},
		{"states", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			b.add(w, "push button", "Off", box(0, 0, 40, 20), "showing", "visible", "focusable")
			b.add(w, "check box", "On", box(0, 30, 40, 20), "enabled", "sensitive", "showing", "checked")
			b.add(w, "entry", "Locked", box(0, 60, 40, 20), "enabled", "sensitive", "showing", "read only", "single line")
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes}
		}},
		{"trailer", func(b *tiny) *shinken.Tree {
			w := b.add(-1, "frame", "W", win)
			e := b.add(w, "entry", "Focused", box(0, 0, 100, 20), "enabled", "showing", "editable", "focused")
			b.nodes[e].Focused = true
			return &shinken.Tree{App: "a", Window: "W", Nodes: b.nodes,
				OtherWindows: []shinken.Window{{Title: "Other", ID: 42}}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := shinken.NewObserver(&staticTree{c.tree(&tiny{})})
			obs, err := o.Observe(context.Background(), shinken.ObserveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "rule-"+c.name, obs.TreeText)
		})
	}
}
