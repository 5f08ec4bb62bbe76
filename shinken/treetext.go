package shinken

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tree_text, the legible rendering of an accessibility tree for a model.
//
// Full form:
//
//	# app "notes" window "Notes" rev 3
//	e1 frame (active) "Notes"
//	  e2 text (multi line, focused) "Body" Value:"Dear Ada"
//	  e3 push button "Save" Actions:click
//	other windows: "Form"
//	focus: e2
//
// Rules, chosen to keep it short without losing anything an agent acts on:
//   - One line per element: ref, role, (states), "name", Value:"…", Actions:….
//     Children are indented two spaces under their parent.
//   - States that carry no information are left out: enabled, sensitive,
//     showing, visible, focusable, selectable and the like are the norm, so
//     only their absence is shown ("disabled", "hidden"); "editable" and
//     "single line" are the norm for text fields ("read only" is shown).
//   - Unnamed layout containers (panel, filler, scroll pane...) with no
//     value and no actions get no line: their children are shown at their
//     depth. They keep their refs and stay in the elements array.
//   - Names and values longer than maxField characters are cut with "…";
//     the elements array carries them whole.
//   - Actions equal to the role's obvious one are still listed: they are
//     what invoke_action takes.
//   - The trailer names the focused element ("focus: none" without one).
//
// Diff form (observe with diff=true, against the previous revision):
//
//	# diff rev 4 of rev 3
//	~ e2 text (multi line, focused) "Body" Value:"Dear Ada, hi"
//	+ e9 label "Saved"
//	- removed: e5-e7, e12
//	focus: e2
//
// "~" marks a changed line, "+" an added one; removed refs are summarised in
// one line as ranges. An unchanged tree renders "(no changes since rev N)".
// A diff longer than half the full rendering (and more than diffMinBudget
// lines) falls back to the full form.

const (
	maxField      = 80
	diffMinBudget = 12
)

// quietStates are the norm: shown by their absence, never by presence.
var quietStates = map[string]bool{
	"enabled": true, "sensitive": true, "showing": true, "visible": true, "focusable": true,
	"selectable": true, "opaque": true, "resizable": true, "can focus": true, "transient": true,
	"has tooltip": true, "vertical": true, "horizontal": true, "supports autocompletion": true,
	"selectable text": true, "has popup": true, "collapsed": false,
}

// layoutRoles are folded away when they have no name, value or actions.
var layoutRoles = map[string]bool{
	"panel": true, "filler": true, "scroll pane": true, "viewport": true, "section": true,
	"layered pane": true, "split pane": true, "glass pane": true, "root pane": true,
	"internal frame": false, "grouping": true, "unknown": true, "redundant object": true,
	"form": false, "box": true, "tool bar": false, "invalid": true,
}

type rendered struct {
	full  string
	diff  string      // empty when no diff was asked for, or it was too long
	shown []*refEntry // the elements that got a line, in order
}

// render renders t in full and, when diff is set, as a diff against the
// revision rev-1 whose shown elements are prev. Each element's entry keeps
// the line it was given, so the next diff compares against it.
func render(t *Tree, entries []*refEntry, prev []*refEntry, rev int, diff bool) rendered {
	var r rendered
	var b, d strings.Builder
	b.Grow(len(t.Nodes) * 48)
	if t.App == "" && t.Window == "" {
		b.WriteString("# desktop")
	} else {
		b.WriteString("# app ")
		b.WriteString(strconv.Quote(t.App))
		b.WriteString(" window ")
		b.WriteString(strconv.Quote(t.Window))
	}
	b.WriteString(" rev ")
	b.WriteString(strconv.Itoa(rev))
	b.WriteByte('\n')
	if t.Truncated {
		b.WriteString("# truncated: ")
		b.WriteString(t.TruncatedWhy)
		b.WriteByte('\n')
	}
	if diff {
		d.WriteString("# diff rev ")
		d.WriteString(strconv.Itoa(rev))
		d.WriteString(" of rev ")
		d.WriteString(strconv.Itoa(rev - 1))
		d.WriteByte('\n')
	}
	changes := 0
	focus := ""
	// level[i] is the indent level node i's children use.
	level := make([]int, len(t.Nodes))
	r.shown = make([]*refEntry, 0, len(t.Nodes))
	var line []byte
	for i := range t.Nodes {
		n := &t.Nodes[i]
		e := entries[i]
		lv := 0
		if n.Parent >= 0 && n.Parent < i {
			lv = level[n.Parent]
		}
		if n.Focused {
			focus = refName(e.n)
		}
		if folded(n) {
			level[i] = lv
			continue
		}
		level[i] = lv + 1
		line = appendLine(line[:0], n, e.n)
		for range lv {
			b.WriteString("  ")
		}
		b.Write(line)
		b.WriteByte('\n')
		mark := ""
		switch {
		case e.shown != rev-1:
			mark = "+ "
		case e.line != string(line): // compared without allocating
			mark = "~ "
		}
		if mark != "" {
			e.line = string(line)
			if diff {
				d.WriteString(mark)
				d.Write(line)
				d.WriteByte('\n')
				changes++
			}
		}
		e.shown = rev
		r.shown = append(r.shown, e)
	}
	if len(t.Others) > 0 {
		b.WriteString("other windows: ")
		for i, o := range t.Others {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(cut(o)))
		}
		b.WriteByte('\n')
	}
	trailer := "focus: none"
	if focus != "" {
		trailer = "focus: " + focus
	}
	b.WriteString(trailer)
	r.full = b.String()
	if !diff {
		return r
	}
	var removed []int
	for _, e := range prev {
		if e.shown != rev {
			removed = append(removed, e.n)
		}
	}
	if len(removed) > 0 {
		slices.Sort(removed)
		d.WriteString("- removed: ")
		d.WriteString(refRanges(removed))
		d.WriteByte('\n')
		changes++
	}
	if changes > diffMinBudget && changes > len(r.shown)/2 {
		return r // too long: the full rendering serves better
	}
	if changes == 0 {
		d.WriteString("(no changes since rev ")
		d.WriteString(strconv.Itoa(rev - 1))
		d.WriteString(")\n")
	}
	d.WriteString(trailer)
	r.diff = d.String()
	return r
}

func folded(n *Node) bool {
	return layoutRoles[n.Role] && n.Name == "" && n.Value == "" && len(n.Actions) == 0 && !n.Focused
}

func appendLine(b []byte, n *Node, ref int) []byte {
	b = append(b, 'e')
	b = strconv.AppendInt(b, int64(ref), 10)
	b = append(b, ' ')
	b = append(b, n.Role...)
	b = appendStates(b, n)
	if n.Name != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, cut(n.Name))
	}
	if n.Value != "" {
		b = append(b, " Value:"...)
		b = strconv.AppendQuote(b, cut(n.Value))
	}
	if len(n.Actions) > 0 {
		b = append(b, " Actions:"...)
		for i, a := range n.Actions {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, a...)
		}
	}
	return b
}

func appendStates(b []byte, n *Node) []byte {
	has := func(s string) bool { return slices.Contains(n.States, s) }
	start := len(b)
	add := func(s string) {
		if len(b) == start {
			b = append(b, " ("...)
		} else {
			b = append(b, ", "...)
		}
		b = append(b, s...)
	}
	if len(n.States) > 0 {
		if !has("enabled") && !has("sensitive") {
			add("disabled")
		}
		if !has("showing") && !has("visible") {
			add("hidden")
		}
	}
	isText := n.Role == "text" || n.Role == "entry" || n.Role == "password text"
	if isText && len(n.States) > 0 && !has("editable") {
		add("read only")
	}
	for _, s := range n.States {
		switch {
		case quietStates[s]:
		case isText && (s == "editable" || s == "single line"):
		default:
			add(s)
		}
	}
	if len(b) > start {
		b = append(b, ')')
	}
	return b
}

// cut shortens s to maxField characters with an ellipsis, and puts newlines
// on one line.
func cut(s string) string {
	if utf8.RuneCountInString(s) > maxField {
		i, n := 0, 0
		for i = range s {
			if n == maxField-1 {
				break
			}
			n++
		}
		s = s[:i] + "…"
	}
	return s
}

// refRanges renders sorted ref numbers as "e3, e5-e9".
func refRanges(refs []int) string {
	var b strings.Builder
	for i := 0; i < len(refs); {
		j := i
		for j+1 < len(refs) && refs[j+1] == refs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(refName(refs[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(refName(refs[j]))
		}
		i = j + 1
	}
	return b.String()
}
