package atspi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// readBackWait bounds how long set_value waits for an application to show
// the value it was given, for toolkits that apply it on their next loop.
const readBackWait = 250 * time.Millisecond

// parseID splits a node ID, "busname:/object/path", into its parts.
func parseID(id string) (bus, path string, ok bool) {
	i := strings.Index(id, ":/")
	if i <= 0 {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

// Perform implements [shinken.A11y]. OpInvoke runs Action.DoAction with the
// index of the action whose machine name (Action.GetName) is act.Action,
// or the first action. OpSetValue replaces the text of an editable text
// (EditableText.SetTextContents) or sets a Value (Value.CurrentValue, the
// text parsed as a number; a node with both, such as a spin button, takes a
// number through Value), then reads the node back: an application that
// kept another value yields a *NotAppliedError. On a combo box that is not
// editable, OpSetValue selects the option whose name is the text. A field
// that cannot take its value through its interfaces faithfully (no
// editable text nor value, or a browser page's field) yields an error
// wrapping [ErrNeedsTyping].
func (c *Client) Perform(ctx context.Context, id string, act shinken.ElementAction) error {
	if c.closed() {
		return errClientClosed
	}
	bus, path, ok := parseID(id)
	if !ok {
		return fmt.Errorf("%w: %q is not an AT-SPI node", aci.ErrStaleElementRef, id)
	}
	if act.Op != shinken.OpInvoke && act.Op != shinken.OpSetValue {
		return fmt.Errorf("%w: atspi: unknown element operation %d", aci.ErrInvalidAction, act.Op)
	}
	a := c.appFor(bus)
	deadline := time.Now().Add(c.appTimeout(a) + readBackWait)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := c.withApp(ctx, a, func(conn *wireConn, dest string) error {
		n := &node{c: c, a: a, ctx: ctx, conn: conn, dest: dest, path: path, id: id, deadline: deadline}
		var states stateSet
		var ifs ifaceSet
		var role uint32
		err := n.run(func(p *pipeline, fail func(error)) {
			p.call(call(dest, path, ifAccessible, "GetRole"), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "u"); err == nil {
						role = d.u32()
					}
				}
				fail(err)
			})
			p.call(call(dest, path, ifAccessible, "GetState"), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "au"); err == nil {
						states = readStates(d)
					}
				}
				fail(err)
			})
			p.call(call(dest, path, ifAccessible, "GetInterfaces"), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "as"); err == nil {
						ifs = readIfaces(d)
					}
				}
				fail(err)
			})
		})
		if err != nil {
			return err
		}
		if states.has(stateDefunct) {
			return fmt.Errorf("%w: %s is defunct", aci.ErrStaleElementRef, id)
		}
		if act.Op == shinken.OpInvoke {
			return n.invoke(ifs, act.Action)
		}
		if role == roleComboBox && !states.has(stateEditable) {
			return n.selectOption(act.Text)
		}
		if n.browser() && ifs&hasValue == 0 {
			return fmt.Errorf("%w: %s is a browser's field", ErrNeedsTyping, id)
		}
		if ifs&(hasEditableText|hasValue) == 0 {
			return fmt.Errorf("%w: %s has neither editable text nor a value", ErrNeedsTyping, id)
		}
		return n.setValue(ifs, act.Text)
	})
	var ce *CallError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.gone():
		return fmt.Errorf("%w: %s is gone: %v", aci.ErrStaleElementRef, id, err)
	}
	return err
}

// node is one element verb in progress, holding its application's
// connection.
type node struct {
	c        *Client
	a        *app
	ctx      context.Context
	conn     *wireConn
	dest     string
	path, id string
	deadline time.Time
}

// run runs the calls queue adds as one pipeline; fail records the first
// error a callback reports.
func (n *node) run(queue func(p *pipeline, fail func(error))) error {
	p := n.c.pipeline(n.ctx, n.a, n.conn, n.deadline)
	var first error
	queue(p, func(err error) {
		if err != nil && first == nil {
			first = err
		}
	})
	if err := p.run(); err != nil {
		return err
	}
	return first
}

// invoke runs the action named name, or the first one.
func (n *node) invoke(ifs ifaceSet, name string) error {
	if ifs&hasAction == 0 {
		if name != "" {
			return fmt.Errorf("%w: %s has no action %q: it has none", aci.ErrNoSuchAction, n.id, name)
		}
		return fmt.Errorf("%w: %s has no actions", aci.ErrElementNotActionable, n.id)
	}
	var names []string
	err := n.run(func(p *pipeline, fail func(error)) {
		p.call(getProperty(n.dest, n.path, ifAction, "NActions"), func(m *message, err error) {
			if err != nil {
				fail(err)
				return
			}
			d, err := expect(m, "v")
			if err != nil {
				fail(err)
				return
			}
			count, _ := readVariantInt(d)
			names = make([]string, min(max(count, 0), maxActions))
			for i := range names {
				p.call(callInt(n.dest, n.path, ifAction, "GetName", int32(i)), func(m *message, err error) {
					if err == nil {
						var d *decoder
						if d, err = expect(m, "s"); err == nil {
							names[i] = d.str()
						}
					}
					fail(err)
				})
			}
		})
	})
	if err != nil {
		return err
	}
	if len(names) == 0 {
		if name != "" {
			return fmt.Errorf("%w: %s has no action %q: it has none", aci.ErrNoSuchAction, n.id, name)
		}
		return fmt.Errorf("%w: %s has no actions", aci.ErrElementNotActionable, n.id)
	}
	index := 0
	if name != "" {
		index = -1
		for i, s := range names {
			if s == name {
				index = i
				break
			}
		}
		if index < 0 {
			return fmt.Errorf("%w: %s has no action %q (it has %s)", aci.ErrNoSuchAction, n.id, name,
				strings.Join(names, ", "))
		}
	}
	var done bool
	err = n.run(func(p *pipeline, fail func(error)) {
		p.call(callInt(n.dest, n.path, ifAction, "DoAction", int32(index)), func(m *message, err error) {
			if err == nil {
				var d *decoder
				if d, err = expect(m, "b"); err == nil {
					done = d.u32() != 0
				}
			}
			fail(err)
		})
	})
	if err != nil {
		return err
	}
	if !done {
		return fmt.Errorf("%w: %s refused action %q", aci.ErrElementNotActionable, n.id, names[index])
	}
	return nil
}

// setValue sets the node's text or value and checks that it took. A node
// with both, such as a spin button, gets a number through Value, which
// commits it, where setting its text would leave the number pending.
func (n *node) setValue(ifs ifaceSet, text string) error {
	_, numErr := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if ifs&hasValue != 0 && numErr == nil {
		ifs &^= hasEditableText
	}
	switch {
	case ifs&hasEditableText != 0:
		err := n.run(func(p *pipeline, fail func(error)) {
			p.call(&methodCall{dest: n.dest, path: n.path, iface: ifEditableText, member: "SetTextContents",
				sig: "s", args: func(e *encoder) { e.str(text) }}, func(m *message, err error) { fail(err) })
		})
		if err != nil {
			return err
		}
		return n.readBack(text, func(p *pipeline, got *string, fail func(error)) {
			p.call(getText(n.dest, n.path), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "s"); err == nil {
						*got = d.str()
					}
				}
				fail(err)
			})
		}, func(got string) bool { return got == text || masked(got, text) })
	case ifs&hasValue != 0:
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s takes a number, not %q", aci.ErrElementNotActionable, n.id, text)
		}
		err = n.run(func(p *pipeline, fail func(error)) {
			p.call(&methodCall{dest: n.dest, path: n.path, iface: ifProperties, member: "Set", sig: "ssv",
				args: func(e *encoder) {
					e.str(ifValue)
					e.str("CurrentValue")
					e.sig("d")
					e.f64(v)
				}}, func(m *message, err error) { fail(err) })
		})
		if err != nil {
			return err
		}
		want := formatNumber(v)
		return n.readBack(want, func(p *pipeline, got *string, fail func(error)) {
			p.call(getProperty(n.dest, n.path, ifValue, "CurrentValue"), func(m *message, err error) {
				if err == nil {
					var d *decoder
					if d, err = expect(m, "v"); err == nil {
						if f, ok := readVariantFloat(d); ok {
							*got = formatNumber(f)
						}
					}
				}
				fail(err)
			})
		}, func(got string) bool {
			f, err := strconv.ParseFloat(got, 64)
			return err == nil && math.Abs(f-v) <= 1e-9*math.Max(1, math.Abs(v))
		})
	}
	return fmt.Errorf("%w: %s has neither editable text nor a value", aci.ErrElementNotActionable, n.id)
}

// readBack reads the node until ok accepts what it shows, for at most
// readBackWait.
func (n *node) readBack(want string, read func(p *pipeline, got *string, fail func(error)), ok func(string) bool) error {
	limit := time.Now().Add(readBackWait)
	for {
		var got string
		if err := n.run(func(p *pipeline, fail func(error)) { read(p, &got, fail) }); err != nil {
			return err
		}
		if ok(got) {
			return nil
		}
		if time.Now().After(limit) {
			return &NotAppliedError{ID: n.id, Want: want, Got: got}
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-t.C:
		case <-n.ctx.Done():
			t.Stop()
			return n.ctx.Err()
		}
	}
}

// masked reports whether got is what a password field shows for text: one
// mask character per character.
func masked(got, text string) bool {
	if got == "" || utf8.RuneCountInString(got) != utf8.RuneCountInString(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(got)
	if !strings.ContainsRune("●•*∗", r) {
		return false
	}
	return strings.Count(got, string(r)) == utf8.RuneCountInString(got)
}
