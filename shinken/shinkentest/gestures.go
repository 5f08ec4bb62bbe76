package shinkentest

import (
	"fmt"
	"image"
	"strings"

	"shinken.dev/go/shinken"
)

// waitSelection copies the entry's selection with ctrl+c until the
// clipboard holds a text ok accepts. The copy is repeated: a toolkit may
// handle the keys that follow a click before the click itself (GTK does,
// when they come within a few milliseconds), and then the first copy sees
// the selection from before the click.
func (s *suite) waitSelection(what string, ok func(string) bool) {
	s.t.Helper()
	c := need[shinken.Clipboard](s)
	// A sentinel, not "": some clipboards cannot hold nothing.
	s.check(c.SetClipboardText(s.ctx, "(nothing copied)"), "SetClipboardText")
	var got string
	s.waitFor(what, func() (bool, error) {
		s.keys("Control_L", "c")
		var err error
		got, err = c.ClipboardText(s.ctx)
		return ok(got), err
	}, func() string { return fmt.Sprintf("ctrl+c copies %q", got) })
}

func testShiftClick(s *suite) {
	need[shinken.Clipboard](s)
	app := s.open()
	s.focusEntry(app)
	s.typeText("hello world")
	s.waitEntry(app, "hello world", `typing "hello world"`)
	// The caret goes to the start, after a "[" that shows the keys were
	// handled (a toolkit may handle keys sent right after a click before the
	// click). Then a shift-click in the first word, far from the click that
	// focused the entry so no toolkit takes the two for a double click, and
	// not near the entry's ends, where a press can land in its padding.
	s.keys("Home")
	s.typeText("[")
	const text = "[hello world"
	s.waitEntry(app, text, `Home then "["`)
	r := s.node(app.Entry).BBox
	in := need[shinken.Injector](s)
	s.check(in.Key(s.ctx, shinken.KeyEvent{Key: "Shift_L", Down: true}), "pressing Shift_L")
	s.click(image.Pt(r.Min.X+50, center(r).Y))
	s.check(in.Key(s.ctx, shinken.KeyEvent{Key: "Shift_L"}), "releasing Shift_L")
	s.waitSelection("a shift-click in the first word selects from the caret to it", func(sel string) bool {
		return sel != "" && len(sel) < len(text)-1 && strings.HasPrefix(text[1:], sel)
	})
}
