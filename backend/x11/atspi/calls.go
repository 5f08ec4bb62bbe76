package atspi

import (
	"image"
	"unicode/utf8"
)

// AT-SPI's D-Bus vocabulary.
const (
	ifAccessible   = "org.a11y.atspi.Accessible"
	ifAction       = "org.a11y.atspi.Action"
	ifApplication  = "org.a11y.atspi.Application"
	ifCache        = "org.a11y.atspi.Cache"
	ifCollection   = "org.a11y.atspi.Collection"
	ifComponent    = "org.a11y.atspi.Component"
	ifDocument     = "org.a11y.atspi.Document"
	ifEditableText = "org.a11y.atspi.EditableText"
	ifText         = "org.a11y.atspi.Text"
	ifValue        = "org.a11y.atspi.Value"
	ifProperties   = "org.freedesktop.DBus.Properties"
	ifEventObject  = "org.a11y.atspi.Event.Object"

	registryName = "org.a11y.atspi.Registry"
	pathRoot     = "/org/a11y/atspi/accessible/root"
	pathCache    = "/org/a11y/atspi/cache"
	pathRegistry = "/org/a11y/atspi/registry"
	pathNull     = "/org/a11y/atspi/null"

	// coordTypeScreen asks Component methods for screen coordinates.
	coordTypeScreen = 0
	// hiddenCoord is the origin toolkits report for a node with no place on
	// screen.
	hiddenCoord = -2147483648
	// maxActions bounds how many actions of one node the walk names.
	maxActions = 16
	// maxValueBytes bounds the text a node's Value carries.
	maxValueBytes = 4096
)

// ifaceSet records the AT-SPI interfaces a node implements, among those a
// walk or an element verb uses.
type ifaceSet uint16

const (
	hasAction ifaceSet = 1 << iota
	hasCollection
	hasComponent
	hasEditableText
	hasText
	hasValue
	hasDocument
)

func parseIface(name string) ifaceSet {
	switch name {
	case ifAction:
		return hasAction
	case ifCollection:
		return hasCollection
	case ifComponent:
		return hasComponent
	case ifEditableText:
		return hasEditableText
	case ifText:
		return hasText
	case ifValue:
		return hasValue
	case ifDocument:
		return hasDocument
	}
	return 0
}

// readIfaces reads an "as" list of interface names.
func readIfaces(d *decoder) ifaceSet {
	var s ifaceSet
	end := d.array(4)
	for d.off < end && d.err == nil {
		s |= parseIface(d.str())
	}
	return s
}

// readStates reads an "au" state set.
func readStates(d *decoder) stateSet {
	var s stateSet
	end := d.array(4)
	for i := 0; d.off < end && d.err == nil; i++ {
		v := d.u32()
		if i < 2 {
			s[i] = v
		}
	}
	return s
}

// readRefs reads an "a(so)" list of object references, keeping the paths
// that belong to bus.
func readRefs(d *decoder, bus string, keep func(path string)) {
	end := d.array(8)
	for d.off < end && d.err == nil {
		b, p := d.ref()
		if d.err == nil && b == bus && p != pathNull {
			keep(p)
		}
	}
}

// call builds a method call on path.
func call(dest, path, iface, member string) *methodCall {
	return &methodCall{dest: dest, path: path, iface: iface, member: member}
}

// callInt builds a method call taking one int32.
func callInt(dest, path, iface, member string, v int32) *methodCall {
	return &methodCall{dest: dest, path: path, iface: iface, member: member, sig: "i",
		args: func(e *encoder) { e.i32(v) }}
}

// callUint builds a method call taking one uint32.
func callUint(dest, path, iface, member string, v uint32) *methodCall {
	return &methodCall{dest: dest, path: path, iface: iface, member: member, sig: "u",
		args: func(e *encoder) { e.u32(v) }}
}

// getProperty builds a Properties.Get call.
func getProperty(dest, path, iface, prop string) *methodCall {
	return &methodCall{dest: dest, path: path, iface: ifProperties, member: "Get", sig: "ss",
		args: func(e *encoder) { e.str(iface); e.str(prop) }}
}

// getAllProperties builds a Properties.GetAll call.
func getAllProperties(dest, path, iface string) *methodCall {
	return &methodCall{dest: dest, path: path, iface: ifProperties, member: "GetAll", sig: "s",
		args: func(e *encoder) { e.str(iface) }}
}

// getText builds a Text.GetText call for the whole text.
func getText(dest, path string) *methodCall {
	return &methodCall{dest: dest, path: path, iface: ifText, member: "GetText", sig: "ii",
		args: func(e *encoder) { e.i32(0); e.i32(-1) }}
}

// getMatchesAll builds a Collection.GetMatches call that returns every
// descendant of path in canonical (pre-order) order, at most count of them.
// The rule matches everything: each criterion is "all of" an empty set.
func getMatchesAll(dest, path string, count int32) *methodCall {
	const matchAll = 1      // ATSPI_Collection_MATCH_ALL
	const sortCanonical = 1 // ATSPI_Collection_SORT_ORDER_CANONICAL
	return &methodCall{dest: dest, path: path, iface: ifCollection, member: "GetMatches",
		sig: "(aiia{ss}iaiiasib)uib",
		args: func(e *encoder) {
			e.pad(8)
			e.array(4, func() { e.i32(0); e.i32(0) }) // states
			e.i32(matchAll)
			e.array(8, nil) // attributes
			e.i32(matchAll)
			e.array(4, func() { e.i32(0); e.i32(0); e.i32(0); e.i32(0) }) // roles
			e.i32(matchAll)
			e.array(4, nil) // interfaces
			e.i32(matchAll)
			e.bool(false) // invert
			e.u32(sortCanonical)
			e.i32(count)
			e.bool(true) // traverse into children that are collections too
		}}
}

// readVariant reads a "v" and returns its signature; the value follows.
func readVariant(d *decoder) string { return d.sig() }

// readVariantInt reads a variant holding an integer property.
func readVariantInt(d *decoder) (int32, bool) {
	switch readVariant(d) {
	case "i", "u":
		return d.i32(), d.err == nil
	}
	return 0, false
}

// readVariantFloat reads a variant holding a number.
func readVariantFloat(d *decoder) (float64, bool) {
	switch readVariant(d) {
	case "d":
		return d.f64(), d.err == nil
	case "i":
		return float64(d.i32()), d.err == nil
	case "u":
		return float64(d.u32()), d.err == nil
	}
	return 0, false
}

// readDocURL reads the "a{ss}" of Document.GetAttributes and returns the
// document's URL: "DocURL" (Gecko), else "URI" (Chromium), else "".
func readDocURL(d *decoder) string {
	var url string
	end := d.array(8)
	for d.off < end && d.err == nil {
		d.align(8)
		k, v := d.str(), d.str()
		if k == "DocURL" || k == "URI" && url == "" {
			url = v
		}
	}
	return url
}

// readExtents reads a "(iiii)" rectangle; a hidden node has none.
func readExtents(d *decoder) (image.Rectangle, bool) {
	d.align(8)
	x, y, w, h := d.i32(), d.i32(), d.i32(), d.i32()
	if d.err != nil || x == hiddenCoord || y == hiddenCoord || w <= 0 || h <= 0 {
		return image.Rectangle{}, false
	}
	return image.Rect(int(x), int(y), int(x)+int(w), int(y)+int(h)), true
}

// accessibleProps holds the Accessible properties a walk reads.
type accessibleProps struct {
	name, desc string
	parentBus  string
	parent     string
	childCount int32
}

// readAccessibleProps reads the a{sv} of Properties.GetAll(Accessible).
func readAccessibleProps(d *decoder) accessibleProps {
	p := accessibleProps{childCount: -1}
	end := d.array(8)
	for d.off < end && d.err == nil {
		d.align(8)
		key := d.str()
		sig := readVariant(d)
		switch {
		case key == "Name" && sig == "s":
			p.name = d.str()
		case key == "Description" && sig == "s":
			p.desc = d.str()
		case key == "Parent" && sig == "(so)":
			p.parentBus, p.parent = d.ref()
		case key == "ChildCount" && sig == "i":
			p.childCount = d.i32()
		case sig != "" && typeEnd(sig, 0) == len(sig):
			d.skipOne(sig, 1)
		default:
			d.fail()
		}
	}
	return p
}

// clip shortens s to at most n bytes without splitting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
