package client

import (
	"context"
	"errors"
	"image"
	"slices"
	"strconv"
	"time"

	"shinken.dev/go/shinken/aci"
)

// Click waits until l's element is actionable (see Locator) and clicks it.
func (l *Locator) Click(ctx context.Context) error {
	return l.act(ctx, "click", true, func(ctx context.Context, e *aci.Element) error {
		return l.c.Click(ctx, aci.Ref(e.Ref))
	})
}

// DoubleClick waits until l's element is actionable and double-clicks it.
func (l *Locator) DoubleClick(ctx context.Context) error {
	return l.act(ctx, "double-click", true, func(ctx context.Context, e *aci.Element) error {
		return l.c.DoubleClick(ctx, aci.Ref(e.Ref))
	})
}

// RightClick waits until l's element is actionable and right-clicks it.
func (l *Locator) RightClick(ctx context.Context) error {
	return l.act(ctx, "right-click", true, func(ctx context.Context, e *aci.Element) error {
		return l.c.RightClick(ctx, aci.Ref(e.Ref))
	})
}

// Hover waits until l's element is showing and stable and points at it.
func (l *Locator) Hover(ctx context.Context) error {
	return l.act(ctx, "hover", false, func(ctx context.Context, e *aci.Element) error {
		return l.c.Move(ctx, aci.Ref(e.Ref))
	})
}

// refusedSetValue reports whether a set_value refusal says the element
// takes no value, so that typing may do instead.
func refusedSetValue(err error) bool {
	return errors.Is(err, aci.ErrNoSuchAction) || errors.Is(err, aci.ErrInvalidAction) ||
		errors.Is(err, aci.ErrUnsupportedVerb) || errors.Is(err, errors.ErrUnsupported)
}

// Fill waits until l's element is actionable and replaces its text with
// text: by set_value where it takes it, else by a click, ctrl+a and typing
// (Delete when text is empty).
func (l *Locator) Fill(ctx context.Context, text string) error {
	return l.act(ctx, "fill", true, func(ctx context.Context, e *aci.Element) error {
		err := l.c.SetValue(ctx, aci.Ref(e.Ref), text)
		if err == nil || !refusedSetValue(err) {
			return err
		}
		if err := l.c.Click(ctx, aci.Ref(e.Ref)); err != nil {
			return err
		}
		if err := l.c.Key(ctx, "ctrl+a"); err != nil {
			return err
		}
		if text == "" {
			return l.c.Key(ctx, "Delete")
		}
		return l.c.TypeText(ctx, text)
	})
}

// Press waits until l's element is actionable, clicks it unless it has the
// focus, and presses keys as Client.Key does ("Return", "ctrl+a Delete").
func (l *Locator) Press(ctx context.Context, keys string) error {
	return l.act(ctx, "press "+keys, true, func(ctx context.Context, e *aci.Element) error {
		if !e.Focused && !slices.Contains(e.States, "focused") {
			if err := l.c.Click(ctx, aci.Ref(e.Ref)); err != nil {
				return err
			}
		}
		return l.c.Key(ctx, keys)
	})
}

// Check waits until l's element is actionable, clicks it unless it is
// checked already, then waits until it shows the state "checked".
func (l *Locator) Check(ctx context.Context) error { return l.setChecked(ctx, true) }

// Uncheck clicks l's element if it is "checked", and waits until it is not.
func (l *Locator) Uncheck(ctx context.Context) error { return l.setChecked(ctx, false) }

func (l *Locator) setChecked(ctx context.Context, want bool) error {
	op := "check"
	if !want {
		op = "uncheck"
	}
	start := time.Now()
	err := l.act(ctx, op, true, func(ctx context.Context, e *aci.Element) error {
		if slices.Contains(e.States, "checked") == want {
			return nil
		}
		return l.c.Click(ctx, aci.Ref(e.Ref))
	})
	if err != nil {
		return err
	}
	return l.waitState(ctx, op, "checked", want, time.Since(start))
}

// waitState waits, for what is left of l's timeout after spent, until l's
// element has (or, when !want, lacks) state.
func (l *Locator) waitState(ctx context.Context, op, state string, want bool, spent time.Duration) error {
	rest := l.timeout
	if rest <= 0 {
		rest = DefaultLocatorTimeout
	}
	rest = max(rest-spent, time.Second)
	not := ""
	if !want {
		not = "not "
	}
	_, err := l.WithTimeout(rest).poll(ctx, op, func(f *found) verdict {
		e, missing, err := f.one()
		if err != nil {
			return stopIfStrict(missing, err)
		}
		if slices.Contains(e.States, state) != want {
			return verdict{missing: "did " + not + "become " + state}
		}
		return verdict{done: true}
	})
	return err
}

// stopIfStrict is the verdict on a read that named no single element after
// an action: several stop the wait; none (an application rebuilding its
// tree as a pop-up closes) is waited out.
func stopIfStrict(missing string, err error) verdict {
	if errors.Is(err, ErrStrict) {
		return verdict{missing: missing, stop: err}
	}
	return verdict{missing: missing}
}

// optionRoles are the roles of a choice in a pop-up list or menu.
var optionRoles = []string{"menu item", "list item", "option", "radio menu item", "check menu item", "table cell", "tree item"}

// SelectOption waits until l's element (a combo box, a list) is actionable
// and chooses option as a person does: a click opens its pop-up, a click on
// the showing choice named option (a menu item...) chooses it. If none
// shows, set_value chooses it after 2 s, or, when a pop-up is expected (the
// element is "expandable", or such a choice showed before the click), after
// half of l's remaining timeout: a loaded application may take seconds. It
// then waits until the element shows option as its value or name, or holds a
// choice named option "selected" or "checked".
func (l *Locator) SelectOption(ctx context.Context, option string) error {
	start := time.Now()
	err := l.act(ctx, "select "+strconv.Quote(option), true, func(ctx context.Context, e *aci.Element) error {
		if e.Value == option || e.Name == option {
			return nil
		}
		before, err := l.c.choices(ctx, option)
		if err != nil {
			return err
		}
		wait := popupGrace
		pops := len(before) > 0 || slices.Contains(e.States, "expandable") || slices.Contains(e.States, "expanded")
		if d, ok := ctx.Deadline(); pops && ok {
			wait = max(wait, time.Until(d)/2)
		}
		if err := l.c.Click(ctx, aci.Ref(e.Ref)); err != nil {
			return err
		}
		choice, err := l.popupChoice(ctx, option, wait, before, box(e))
		if err != nil {
			return err
		}
		if choice == nil {
			return l.c.SetValue(ctx, aci.Ref(e.Ref), option)
		}
		return l.c.Click(ctx, aci.Ref(choice.Ref))
	})
	if err != nil {
		return err
	}
	rest := l.timeout
	if rest <= 0 {
		rest = DefaultLocatorTimeout
	}
	_, err = l.WithTimeout(max(rest-time.Since(start), time.Second)).poll(ctx, "select "+strconv.Quote(option), func(f *found) verdict {
		e, missing, err := f.one()
		if err != nil {
			return stopIfStrict(missing, err)
		}
		if e.Value == option || e.Name == option {
			return verdict{done: true}
		}
		chosen, err := l.c.chosen(ctx, e.Ref, option)
		if err != nil && !errors.Is(err, aci.ErrStaleElementRef) {
			return verdict{missing: "could not be read", stop: err}
		}
		if !chosen {
			return verdict{missing: "does not show " + strconv.Quote(option)}
		}
		return verdict{done: true}
	})
	return err
}

// chosen reports whether the element ref holds a choice named option in
// the state "selected" or "checked" (a web page's select shows its choice
// so, neither as its value nor as its name).
func (c *Client) chosen(ctx context.Context, ref, option string) (bool, error) {
	obs, err := c.Observe(ctx, &ObserveRequest{Subtree: ref})
	if err != nil {
		return false, err
	}
	for _, e := range obs.Elements {
		if e.Ref != ref && e.Name == option && (slices.Contains(e.States, "selected") || slices.Contains(e.States, "checked")) {
			return true, nil
		}
	}
	return false, nil
}

// popupGrace is how long SelectOption waits for the choice to show after
// its click on an element that shows no sign of a pop-up.
const popupGrace = 2 * time.Second

// choices returns the boxes of the choices named option on the desktop
// (see optionRoles), by ref, each as it showed (empty when it did not):
// an application that holds them before its pop-up opens (GTK's, Qt's
// combo boxes) will show them in it.
func (c *Client) choices(ctx context.Context, option string) (map[string]image.Rectangle, error) {
	obs, err := c.Observe(ctx, &ObserveRequest{Desktop: true})
	if err != nil {
		return nil, err
	}
	f := &found{obs: obs}
	got := map[string]image.Rectangle{}
	for i := range obs.Elements {
		e := &obs.Elements[i]
		if e.Name != option || !slices.Contains(optionRoles, e.Role) {
			continue
		}
		got[e.Ref] = image.Rectangle{}
		if f.visible(e) {
			got[e.Ref] = box(e)
		}
	}
	return got, nil
}

// popupChoice waits, for at most wait, for a showing choice named option
// in a pop-up anywhere on the desktop, and returns it (nil when none
// shows). A choice that showed before the click (in before, see choices)
// outside the box of the element clicked, at, counts only once it moved:
// Qt shows a closed combo box's choices, placed at the screen's corner.
func (l *Locator) popupChoice(ctx context.Context, option string, wait time.Duration, before map[string]image.Rectangle, at image.Rectangle) (*aci.Element, error) {
	deadline := time.Now().Add(wait)
	for {
		choice := &Locator{c: l.c, by: By{Name: option}, desktop: true, timeout: time.Until(deadline)}
		var got *aci.Element
		_, err := choice.poll(ctx, "select", func(f *found) verdict {
			for i := range f.matches {
				e := &f.matches[i]
				was := before[e.Ref]
				if slices.Contains(optionRoles, e.Role) && f.visible(e) && (was.Empty() || was != box(e) || was.Overlaps(at)) {
					got = e
					return verdict{done: true}
				}
			}
			return verdict{missing: "shows no choice"}
		})
		var le *LocatorError
		switch {
		case err == nil:
			return got, nil
		case errors.As(err, &le) && le.Missing != "" && errors.Is(err, aci.ErrTimeout):
			return nil, nil // the wait ended with no choice showing
		case ctx.Err() != nil || time.Until(deadline) <= 0:
			return nil, err
		}
		// A read failed (a loaded desktop's snapshot past the runtime's
		// own timeout): that is no sign the pop-up will not show, so the
		// wait goes on, after a pause.
		t := time.NewTimer(pollIntervals[len(pollIntervals)-1])
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// ScrollIntoView waits until l's element is in the tree and, while it is not
// showing, turns the wheel over its window's edge nearest to it.
func (l *Locator) ScrollIntoView(ctx context.Context) error {
	_, err := l.poll(ctx, "scroll into view", func(f *found) verdict {
		e, missing, err := f.one()
		switch {
		case errors.Is(err, ErrStrict):
			return verdict{missing: missing, stop: err}
		case err != nil:
			return verdict{missing: missing}
		case f.visible(e):
			return verdict{done: true}
		}
		at, dy := scrollPoint(f.all, e)
		if err := l.c.Scroll(ctx, aci.Px(float64(at.X), float64(at.Y)), 0, dy); err != nil {
			return verdict{missing: "is not visible", stop: err}
		}
		return verdict{missing: "is not visible", again: true}
	})
	return err
}

// scrollPoint is where to turn the wheel to bring e into view, and which
// way: the point of the showing window (or view) around e's box nearest
// to e, three notches down when e is below it, up when above.
func scrollPoint(all []aci.Element, e *aci.Element) (image.Point, float64) {
	eb := box(e)
	c := eb.Min.Add(eb.Size().Div(2))
	var frame image.Rectangle
	for i := range all {
		o := &all[i]
		if o.Ref == e.Ref || !showing(o) || !slices.Contains([]string{"scroll pane", "viewport", "list", "table", "tree", "tree table", "frame", "dialog", "window", "document web"}, o.Role) {
			continue
		}
		b := box(o)
		if b.Min.X <= c.X && c.X < b.Max.X && (frame.Empty() || b.In(frame)) {
			frame = b
		}
	}
	if frame.Empty() {
		return c, 3
	}
	in := image.Pt(min(max(c.X, frame.Min.X+1), frame.Max.X-2), min(max(c.Y, frame.Min.Y+1), frame.Max.Y-2))
	if c.Y < frame.Min.Y {
		return in, -3
	}
	return in, 3
}

// DragTo drags l's element onto to's, once both are actionable.
func (l *Locator) DragTo(ctx context.Context, to *Locator) error {
	return l.act(ctx, "drag", true, func(ctx context.Context, e *aci.Element) error {
		t, err := to.actionable(ctx, "drag onto", false)
		if err != nil {
			return err
		}
		return l.c.Drag(ctx, aci.Ref(e.Ref), aci.Ref(t.Ref), 0)
	})
}
