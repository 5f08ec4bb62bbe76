package atspi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"shinken.dev/go/shinken/aci"
)

// This file holds what set_value needs beyond setting an interface's
// value: picking a combo box's option by name, and the parts of the
// keyboard fallback the X11 backend composes (focus the node, read its
// text back).

const (
	roleComboBox  = 11
	stateSelected = 23
	// maxOptions bounds how many options a combo box is searched for.
	maxOptions = 512
)

// ErrNeedsTyping marks a set_value the node's interfaces cannot do
// faithfully (a browser's text field, whose page scripts never see text
// set through EditableText; a field with no editable text at all): the
// caller may focus the node and type instead. It wraps
// [aci.ErrElementNotActionable].
var ErrNeedsTyping = fmt.Errorf("%w: atspi: the value must be typed", aci.ErrElementNotActionable)

// withNode runs fn on the node id with its application's connection.
func (c *Client) withNode(ctx context.Context, id string, fn func(n *node) error) error {
	if c.closed() {
		return errClientClosed
	}
	bus, path, ok := parseID(id)
	if !ok {
		return fmt.Errorf("%w: %q is not an AT-SPI node", aci.ErrStaleElementRef, id)
	}
	a := c.appFor(bus)
	deadline := time.Now().Add(c.appTimeout(a))
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := c.withApp(ctx, a, func(conn *wireConn, dest string) error {
		return fn(&node{c: c, a: a, ctx: ctx, conn: conn, dest: dest, path: path, id: id, deadline: deadline})
	})
	var ce *CallError
	if errors.As(err, &ce) && ce.gone() {
		return fmt.Errorf("%w: %s is gone: %v", aci.ErrStaleElementRef, id, err)
	}
	return err
}

// Focus gives the node id the keyboard focus (Component.GrabFocus) and
// waits, briefly, until the node reports it.
func (c *Client) Focus(ctx context.Context, id string) error {
	return c.withNode(ctx, id, func(n *node) error {
		var ok bool
		err := n.run(func(p *pipeline, fail func(error)) {
			p.call(call(n.dest, n.path, ifComponent, "GrabFocus"), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "b"); err == nil {
						ok = d.u32() != 0
					}
				}
				fail(err)
			})
		})
		if err == nil && !ok {
			err = fmt.Errorf("%w: %s refused the focus", aci.ErrElementNotActionable, id)
		}
		if err != nil {
			return err
		}
		// The toolkit moves the focus on its loop: keys sent before it
		// did would land in the previously focused field.
		// Firefox may never report it on a page field: the read-back
		// after typing is what proves the value.
		n.waitFor(func() bool {
			var has bool
			n.run(func(p *pipeline, fail func(error)) {
				p.call(call(n.dest, n.path, ifAccessible, "GetState"), func(m *message, err error) {
					if err == nil {
						if d, err := expect(m, "au"); err == nil {
							has = readStates(d).has(stateFocused)
						}
					}
				})
			})
			return has
		})
		return nil
	})
}

// Text returns the node's whole text (Text.GetText), or its Value as a
// number when it has no text.
func (c *Client) Text(ctx context.Context, id string) (string, error) {
	var got string
	err := c.withNode(ctx, id, func(n *node) error {
		return n.run(func(p *pipeline, fail func(error)) {
			p.call(getText(n.dest, n.path), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "s"); err == nil {
						got = strings.ReplaceAll(d.str(), "\uFFFC", "")
					}
				}
				fail(err)
			})
		})
	})
	return got, err
}

// browser reports whether the node's application is a web browser, whose
// page fields take text set through EditableText without their scripts
// (and forms) seeing it.
func (n *node) browser() bool {
	bus, _, _ := parseID(n.id)
	a := n.c.appFor(bus)
	return a.memo.browser
}

// selectOption selects the option named text among the combo box's
// options (its children, or its popup list's), by Selection.SelectChild
// on the option's parent, else by the option's first action, and checks
// that it took.
func (n *node) selectOption(text string) error {
	type option struct{ parent, path, name string }
	var opts []option
	var kids func(p *pipeline, path string, depth int)
	kids = func(p *pipeline, path string, depth int) {
		p.call(call(n.dest, path, ifAccessible, "GetChildren"), func(m *message, err error) {
			if err != nil {
				return
			}
			d, err := expect(m, "a(so)")
			if err != nil {
				return
			}
			bus, _, _ := parseID(n.id)
			readRefs(d, bus, func(child string) {
				if len(opts) >= maxOptions {
					return
				}
				i := len(opts)
				opts = append(opts, option{parent: path, path: child})
				p.call(getProperty(n.dest, child, ifAccessible, "Name"), func(m *message, err error) {
					if err == nil {
						if d, err := expect(m, "v"); err == nil && readVariant(d) == "s" {
							opts[i].name = strings.TrimSpace(d.str())
						}
					}
				})
				if depth == 0 {
					kids(p, child, 1)
				}
			})
		})
	}
	if err := n.run(func(p *pipeline, fail func(error)) { kids(p, n.path, 0) }); err != nil {
		return err
	}
	want := strings.TrimSpace(text)
	pick := -1
	for i, o := range opts {
		if o.name == want {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, o := range opts {
			if o.name != "" && strings.EqualFold(o.name, want) {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		var names []string
		for _, o := range opts {
			if o.name != "" && o.path != "" {
				names = append(names, fmt.Sprintf("%q", o.name))
			}
		}
		return fmt.Errorf("%w: %s has no option %q (options: %s)", aci.ErrElementNotActionable, n.id, text,
			strings.Join(names, ", "))
	}
	o := opts[pick]
	index := int32(0)
	for _, s := range opts[:pick] {
		if s.parent == o.parent {
			index++
		}
	}
	tried := []string{}
	// A combo box named after its current option (GTK's, Qt's; nameless
	// while none is) must take the new option's name: an option selected
	// in the popup alone is not picked.
	boxName := func() string {
		var name string
		n.run(func(p *pipeline, fail func(error)) {
			p.call(getProperty(n.dest, n.path, ifAccessible, "Name"), func(m *message, err error) {
				if err == nil {
					if d, err := expect(m, "v"); err == nil && readVariant(d) == "s" {
						name = strings.TrimSpace(d.str())
					}
				}
			})
		})
		return name
	}
	before := boxName()
	namedByOption := before == "" || slices.ContainsFunc(opts, func(x option) bool { return x.name == before })
	selected := func() bool {
		if namedByOption {
			return boxName() == o.name
		}
		var ok bool
		n.run(func(p *pipeline, fail func(error)) {
			p.call(call(n.dest, o.path, ifAccessible, "GetState"), func(m *message, err error) {
				if err == nil {
					if d, err := expect(m, "au"); err == nil {
						ok = readStates(d).has(stateSelected)
					}
				}
			})
		})
		return ok
	}
	var done bool
	err := n.run(func(p *pipeline, fail func(error)) {
		p.call(callInt(n.dest, o.parent, "org.a11y.atspi.Selection", "SelectChild", index), func(m *message, err error) {
			if err == nil {
				if d, err := expect(m, "b"); err == nil {
					done = d.u32() != 0
				}
			}
		})
	})
	if err != nil {
		return err
	}
	tried = append(tried, "Selection.SelectChild")
	if done && n.waitFor(selected) {
		return nil
	}
	on := &node{c: n.c, a: n.a, ctx: n.ctx, conn: n.conn, dest: n.dest, path: o.path, id: n.id, deadline: n.deadline}
	if err := on.invoke(hasAction, ""); err == nil {
		tried = append(tried, "the option's first action")
		if n.waitFor(selected) {
			return nil
		}
	}
	// Open the popup (the box's first action) and pick the option in it,
	// as a user would.
	if err := n.invoke(hasAction, ""); err == nil {
		showing := func() bool {
			var ok bool
			n.run(func(p *pipeline, fail func(error)) {
				p.call(call(n.dest, o.path, ifAccessible, "GetState"), func(m *message, err error) {
					if err == nil {
						if d, err := expect(m, "au"); err == nil {
							ok = readStates(d).has(stateShowing)
						}
					}
				})
			})
			return ok
		}
		n.waitFor(showing)
		if err := on.invoke(hasAction, ""); err == nil {
			tried = append(tried, "opening the box and the option's first action")
			if n.waitFor(selected) {
				return nil
			}
			if namedByOption {
				// Qt highlights the option in the open popup and waits
				// for a key to take it.
				moves := 0
				for i, x := range opts {
					if x.parent == o.parent && x.name == before {
						moves = pick - i
					}
				}
				return &PopupOpenError{ID: n.id, Option: o.name, Moves: moves, Tried: strings.Join(tried, ", then ")}
			}
		}
	}
	return fmt.Errorf("%w: %s: option %q is still not selected after %s", aci.ErrElementNotActionable, n.id, want,
		strings.Join(tried, ", then "))
}

// A PopupOpenError reports a combo box left with its popup open and the
// option selected in it but not taken: the toolkit waits for the keyboard
// to move to it and take it. It wraps [aci.ErrElementNotActionable].
type PopupOpenError struct {
	ID     string // the combo box
	Option string // the option wanted
	// Moves is how many rows down (up when negative) the option lies from
	// the box's current one, where the popup's keyboard focus is.
	Moves int
	Tried string // what was tried
}

// Error says what was tried.
func (e *PopupOpenError) Error() string {
	return fmt.Sprintf("atspi: %s: option %q is selected in the open popup, not taken, after %s", e.ID, e.Option, e.Tried)
}

// Unwrap returns [aci.ErrElementNotActionable].
func (e *PopupOpenError) Unwrap() error { return aci.ErrElementNotActionable }

// Name returns the node's accessible name.
func (c *Client) Name(ctx context.Context, id string) (string, error) {
	var name string
	err := c.withNode(ctx, id, func(n *node) error {
		return n.run(func(p *pipeline, fail func(error)) {
			p.call(getProperty(n.dest, n.path, ifAccessible, "Name"), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "v"); err == nil && readVariant(d) == "s" {
						name = strings.TrimSpace(d.str())
					}
				}
				fail(err)
			})
		})
	})
	return name, err
}

// waitFor polls ok for at most readBackWait.
func (n *node) waitFor(ok func() bool) bool {
	limit := time.Now().Add(readBackWait)
	for {
		if ok() {
			return true
		}
		if time.Now().After(limit) {
			return false
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-t.C:
		case <-n.ctx.Done():
			t.Stop()
			return false
		}
	}
}
