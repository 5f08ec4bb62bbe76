package shinkentest

import (
	"strconv"
	"strings"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// testSettled drives the fixture through a Runtime and a Client, as an
// agent would, and looks right after each action, never waiting: the
// Runtime settles each action before its ack ([shinken.Settler]), so the
// very next screenshot shows a click on the button, the next observe reads
// the counter it changed, and text typed right after a click on the entry
// lands in the entry.
func testSettled(s *suite) {
	need[shinken.Injector](s)
	need[shinken.Capturer](s)
	app := s.open()
	button, entry := center(s.node(app.Button).BBox), center(s.node(app.Entry).BBox)

	c := serve(s.t, s.b, nil, s.opts.Proxy)

	before, err := c.Screenshot(s.ctx, nil)
	s.check(err, "screenshot")
	for i := 1; i <= 3; i++ {
		s.check(c.Click(s.ctx, aci.Px(float64(button.X), float64(button.Y))), "click the button")
		after, err := c.Screenshot(s.ctx, nil)
		s.check(err, "screenshot after the click")
		if after.Hash == before.Hash {
			s.t.Fatalf("click %d: the screenshot right after the ack shows the old pixels", i)
		}
		before = after
		if _, ok := s.b.(shinken.A11y); ok {
			obs, err := c.Observe(s.ctx, nil)
			s.check(err, "observe after the click")
			if !counterReads(obs, i) {
				s.t.Fatalf("click %d: the observe right after the ack does not show the counter at %d:\n%s", i, i, obs.TreeText)
			}
		}
	}

	s.check(c.Click(s.ctx, aci.Px(float64(entry.X), float64(entry.Y))), "click the entry")
	s.check(c.TypeText(s.ctx, "settled ✓"), "type into the entry")
	obs, err := c.Observe(s.ctx, nil)
	s.check(err, "observe after typing")
	for _, e := range obs.Elements {
		if (e.Role == "text" || e.Role == "entry") && strings.Contains(e.Value, "settled ✓") {
			return
		}
	}
	s.t.Fatalf("the text typed right after the click on the entry is not in the entry:\n%s", obs.TreeText)
}

// counterReads reports whether obs shows a label reading n.
func counterReads(obs *aci.Observation, n int) bool {
	want := strconv.Itoa(n)
	for _, e := range obs.Elements {
		if e.Role == "label" && (strings.TrimSpace(e.Name) == want || strings.TrimSpace(e.Value) == want) {
			return true
		}
	}
	return false
}
