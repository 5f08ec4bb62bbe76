package atspi

import (
	"context"
	"fmt"
	"image"

	"shinken.dev/go/internal/roles"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

var _ shinken.Locator = (*Client)(nil)

// scrollAnywhere is AT-SPI's ScrollType ANYWHERE: the least scrolling that
// brings the whole node into view.
const scrollAnywhere = 6

// Locate implements [shinken.Locator]: it reads the extents of the node and
// of its ancestors in one pipelined round trip, clips the node's box to
// every ancestor box that has an area (its window, a page's viewport, a
// scrolled container; a popup's zero-size parent clips nothing) up to the
// first that owns a pop-up (a menu, a combo box: see popupOwner), and when
// the node is not wholly visible asks Component.ScrollTo and reads them
// again. Ancestors in another application, or that are gone, are passed
// over.
func (c *Client) Locate(ctx context.Context, id string, ancestors []string) (image.Rectangle, error) {
	bus, _, ok := parseID(id)
	if !ok {
		return image.Rectangle{}, fmt.Errorf("%w: %q is not an AT-SPI node", aci.ErrStaleElementRef, id)
	}
	var paths []string
	for _, a := range ancestors {
		if b, p, ok := parseID(a); ok && b == bus {
			paths = append(paths, p)
		}
	}
	var visible image.Rectangle
	err := c.withNode(ctx, id, func(n *node) error {
		box, whole, err := n.visible(paths)
		if err != nil {
			return err
		}
		visible = box
		if box == whole && !box.Empty() {
			return nil
		}
		var scrolled bool
		err = n.run(func(p *pipeline, fail func(error)) {
			p.call(callUint(n.dest, n.path, ifComponent, "ScrollTo", scrollAnywhere), func(m *message, err error) {
				if err == nil {
					if d, err := expect(m, "b"); err == nil {
						scrolled = d.u32() != 0
					}
				}
			})
		})
		if err != nil || !scrolled {
			return err
		}
		// The toolkit scrolls on its loop: read until the box holds still.
		last := box
		n.waitFor(func() bool {
			b, _, err := n.visible(paths)
			if err != nil {
				return true
			}
			still := b == last
			last, visible = b, b
			return still && b != box
		})
		return nil
	})
	return visible, err
}

// visible reads the node's extents and its ancestors' (at paths), and
// returns its box clipped to theirs, and its whole box.
func (n *node) visible(paths []string) (box, whole image.Rectangle, err error) {
	boxes := make([]image.Rectangle, len(paths))
	roles := make([]uint32, len(paths))
	var states stateSet
	err = n.run(func(p *pipeline, fail func(error)) {
		p.call(call(n.dest, n.path, ifAccessible, "GetState"), func(m *message, err error) {
			if err == nil {
				var d *decoder
				if d, err = expect(m, "au"); err == nil {
					states = readStates(d)
				}
			}
			fail(err)
		})
		p.call(callUint(n.dest, n.path, ifComponent, "GetExtents", coordTypeScreen), func(m *message, err error) {
			if err == nil {
				var d *decoder
				if d, err = expect(m, "(iiii)"); err == nil {
					whole, _ = readExtents(d)
				}
			}
			fail(err)
		})
		for i, path := range paths {
			p.call(callUint(n.dest, path, ifComponent, "GetExtents", coordTypeScreen), func(m *message, err error) {
				if err == nil {
					if d, err := expect(m, "(iiii)"); err == nil {
						boxes[i], _ = readExtents(d)
					}
				}
			})
			p.call(call(n.dest, path, ifAccessible, "GetRole"), func(m *message, err error) {
				if err == nil {
					if d, err := expect(m, "u"); err == nil {
						roles[i] = d.u32()
					}
				}
			})
		}
	})
	if err != nil {
		return image.Rectangle{}, image.Rectangle{}, err
	}
	if states.has(stateDefunct) {
		return image.Rectangle{}, image.Rectangle{}, fmt.Errorf("%w: %s is defunct", aci.ErrStaleElementRef, n.id)
	}
	box = whole
	for i, b := range boxes {
		if popupOwner(roles[i]) {
			break
		}
		if !b.Empty() {
			box = box.Intersect(b)
		}
	}
	return box, whole, nil
}

// popupOwner reports whether a node of role shows its children in a
// pop-up window of their own (an override-redirect menu, a combo box's
// list): the items of a menu three deep hang under a menu bar's thin
// strip, and neither the owner nor its ancestors (its window included:
// a pop-up may reach past it) clip them.
func popupOwner(role uint32) bool { return roles.PopupOwner(roleName(role)) }
