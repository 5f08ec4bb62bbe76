package shinken

import (
	"image"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"shinken.dev/go/internal/roles"
	"shinken.dev/go/shinken/aci"
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
// Rules, chosen to keep it short without losing anything an agent acts on.
// The elements array always carries every node whole; only the text is
// compacted:
//   - One line per element: ref, role, (states), "name", Value:"…", Actions:….
//     Children are indented two spaces under their parent.
//   - Hidden and non-showing subtrees (no "showing" state; on AT-SPI, no
//     state at all, but for an
//     application's root) get no lines: a
//     browser's chrome hides dozens of panels, a scrolled list hundreds of
//     rows. The options of a combo box are kept, since picking one is what
//     the box is for. A trailer line counts what was left out; observe with
//     an element_ref target renders that element's subtree with nothing
//     left out.
//   - Actions that nearly every node with actions carries (Chromium gives
//     every node doDefault and showContextMenu, Firefox gives its chrome
//     click) are named once in a header line and left off the element
//     lines. Defunct nodes get no line.
//   - Anonymous containers (no name, no value, no action of their own, not
//     focused, not interactive) get no line: their children are shown at
//     their depth. Tables, rows, lists, menus and tab lists keep their line.
//   - A node without a name whose children are only text takes their text
//     as its name, and the text children get no line; a text child that
//     only repeats its parent's name gets no line; text made only of
//     punctuation (list bullets, separators) gets none either.
//   - A label whose text is the name of a control beside it gets no line:
//     the control carries the name.
//   - A Value equal to the name is left out (a list item's bullet ignored),
//     and so is one made only of punctuation; object-replacement characters
//     (U+FFFC, which browsers put where an embedded object sits) are
//     removed from names and values.
//   - Elements outside their window or the viewport of the page or
//     scrolling container that holds them are marked "offscreen", those cut
//     by its edge (less than four fifths of them inside) "partly
//     offscreen". On AT-SPI a named, showing node without extents under one
//     with extents is offscreen too: GTK gives rows scrolled out of view
//     none.
//   - Every interactive element (links, buttons, entries, check and radio
//     boxes, combo boxes and their options, tabs, menu items, sliders, spin
//     buttons) keeps its line and its ref.
//   - States that carry no information are left out: enabled, sensitive,
//     showing, visible, focusable, selectable and the like are the norm, so
//     only their absence is shown ("disabled"); "editable" and "single
//     line" are the norm for text fields ("read only" is shown).
//   - Names and values longer than maxField characters are cut with "…".
//   - The trailer lists the other top-level windows, with the window_id
//     activate_window takes when the backend knows it
//     (`other windows: "Form" (window_id 4194311)`), even those of
//     applications with no accessibility tree, and names the focused
//     element ("focus: none" without one).
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
// one line as ranges. An element that lost its line (hidden, scrolled out)
// counts as removed. An unchanged tree renders "(no changes since rev N)".
// A diff longer than half the full rendering (and more than diffMinBudget
// lines) falls back to the full form. The observation's delta lists the
// same elements: added ("+"), changed ("~") and removed refs.

const (
	maxField      = 80
	diffMinBudget = 12
	// An action is common, named once in the header, when at least
	// commonShare of the shown nodes carry it and they are at least
	// commonMin.
	commonShare = 0.9
	commonMin   = 20
)

// quietStates are the norm: shown by their absence, never by presence.
var quietStates = map[string]bool{
	"enabled": true, "sensitive": true, "showing": true, "visible": true, "focusable": true,
	"selectable": true, "opaque": true, "resizable": true, "can focus": true, "transient": true,
	"has tooltip": true, "vertical": true, "horizontal": true, "supports autocompletion": true,
	"selectable text": true, "has popup": true, "collapsed": false, "checkable": true,
	"manages descendants": true, "is default": true, "single line": true,
}

// keptRoles keep their line when anonymous: their role is the information.
var keptRoles = map[string]bool{
	"table": true, "table row": true, "list": true, "list box": true, "tree": true, "tree table": true,
	"menu": true, "menu bar": true, "page tab list": true, "dialog": true, "alert": true,
}

// interactiveRoles always keep their line and their ref.
var interactiveRoles = map[string]bool{
	"link": true, "push button": true, "toggle button": true, "entry": true, "password text": true,
	"check box": true, "radio button": true, "combo box": true, "menu item": true,
	"check menu item": true, "radio menu item": true, "page tab": true, "slider": true,
	"spin button": true, "tree item": true, "scroll bar": true, "push button menu": true,
	"toggle": true, "switch": true, "option": true,
}

// textRoles are the roles of plain text runs.
var textRoles = map[string]bool{"static": true, "text": true, "label": true}

// clipRoles bound what their descendants can show.
var clipRoles = map[string]bool{
	"frame": true, "window": true, "dialog": true, "document web": true, "document frame": true,
	"scroll pane": true, "viewport": true,
}

// A line's fate in the text.
type lineKind uint8

const (
	lineShow lineKind = iota
	lineFold          // no line; its children are shown at its depth
	lineSkip          // no line, nor any for its subtree
)

// A plan says how each node of a tree is rendered.
type plan struct {
	kind   []lineKind
	name   []string
	value  []string
	mark   []string // "offscreen", "partly offscreen" or ""
	own    [][]string
	common []string // actions left off every line
	left   int      // nodes left out as hidden
}

func has(n *Node, s string) bool { return slices.Contains(n.States, s) }

// hidden reports whether a node is known not to be showing.
func hidden(n *Node) bool { return len(n.States) > 0 && !has(n, "showing") }

func interactive(n *Node) bool {
	if interactiveRoles[n.Role] {
		return true
	}
	switch n.Role {
	case "text":
		return has(n, "editable")
	case "list item", "table cell":
		// A row or cell is picked by its text: a nameless one (an icon
		// column, a row holding cells) folds into its children.
		return has(n, "selectable") && clean(n.Name) != ""
	}
	return false
}

// clean removes object-replacement characters and surrounding space.
func clean(s string) string {
	if strings.ContainsRune(s, '\uFFFC') {
		s = strings.ReplaceAll(s, "\uFFFC", "")
	}
	return strings.TrimSpace(s)
}

// wordless reports whether s has no letter and no digit.
func wordless(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// commonActions returns the actions nearly every node with actions
// carries, among the nodes not skipped (kind nil: all of them).
func commonActions(t *Tree, kind []lineKind) []string {
	count := map[string]int{}
	acting := 0
	for i := range t.Nodes {
		if (kind == nil || kind[i] != lineSkip) && len(t.Nodes[i].Actions) > 0 {
			acting++
			for _, a := range t.Nodes[i].Actions {
				count[a]++
			}
		}
	}
	var common []string
	if acting >= commonMin {
		for a, c := range count {
			if float64(c) >= commonShare*float64(acting) {
				common = append(common, a)
			}
		}
		slices.Sort(common)
	}
	return common
}

// makePlan applies the rules of the package documentation to t, one
// function a rule, in the order they depend on each other. With all set,
// nothing is left out as hidden. common, when not nil, gives the common
// actions (those of the whole tree t was cut from).
func makePlan(t *Tree, all bool, common *[]string) *plan {
	n := len(t.Nodes)
	p := &plan{kind: make([]lineKind, n), name: make([]string, n), value: make([]string, n),
		mark: make([]string, n), own: make([][]string, n)}
	p.skipHidden(t, all)
	if common != nil {
		p.common = *common
	} else {
		p.common = commonActions(t, p.kind)
	}
	p.namesValuesActions(t)
	kids := p.children(t)
	p.foldText(t, kids)
	p.foldAnonymous(t)
	p.foldLabels(t, kids)
	p.markOffscreen(t)
	return p
}

// parentOf is node i's parent, -1 for a root (or a parent listed after
// it, which a well-formed tree never has).
func parentOf(nodes []Node, i int) int {
	if q := nodes[i].Parent; q >= 0 && q < i {
		return q
	}
	return -1
}

// skipHidden leaves out hidden and defunct subtrees, but for a combo
// box's options and the focused node. On AT-SPI every live node has
// states (enabled, sensitive at least): one with none is not on screen
// (Chromium's unused toolbar buttons).
func (p *plan) skipHidden(t *Tree, all bool) {
	nodes := t.Nodes
	stateless := t.Source == aci.SourceATSPI
	inCombo := make([]bool, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		q := parentOf(nodes, i)
		switch {
		case q >= 0 && p.kind[q] == lineSkip:
			p.kind[i] = lineSkip
		case has(n, "defunct"):
			p.kind[i] = lineSkip
		case !all && (hidden(n) || stateless && q >= 0 && len(n.States) == 0) && !(q >= 0 && inCombo[q]) && !n.Focused:
			p.kind[i] = lineSkip
		}
		inCombo[i] = n.Role == "combo box" || (q >= 0 && inCombo[q])
		if p.kind[i] == lineSkip {
			p.left++
		}
	}
}

// namesValuesActions cleans names and values (object-replacement
// characters, a list item's bullet), drops a value equal to the name or
// made only of punctuation, and keeps of each node's actions those not
// common.
func (p *plan) namesValuesActions(t *Tree) {
	for i := range t.Nodes {
		n := &t.Nodes[i]
		p.name[i], p.value[i] = clean(n.Name), clean(n.Value)
		if n.Role == "list item" {
			p.name[i] = strings.TrimSpace(strings.TrimLeft(p.name[i], "•◦▪‣-"))
			p.value[i] = strings.TrimSpace(strings.TrimLeft(p.value[i], "•◦▪‣-"))
		}
		if p.value[i] == p.name[i] || wordless(p.value[i]) && !interactive(n) {
			p.value[i] = ""
		}
		if len(p.common) == 0 {
			p.own[i] = n.Actions
			continue
		}
		for _, a := range n.Actions {
			if !slices.Contains(p.common, a) {
				p.own[i] = append(p.own[i], a)
			}
		}
	}
}

// children lists each node's children that are not skipped.
func (p *plan) children(t *Tree) [][]int {
	kids := make([][]int, len(t.Nodes))
	for i := range t.Nodes {
		if q := parentOf(t.Nodes, i); q >= 0 && p.kind[i] != lineSkip {
			kids[q] = append(kids[q], i)
		}
	}
	return kids
}

// foldText, bottom up: a node without a name whose children are only
// text takes their text as its name; a text child that only repeats its
// parent's name, or is made only of punctuation, gets no line.
func (p *plan) foldText(t *Tree, kids [][]int) {
	nodes := t.Nodes
	textLeaf := func(i int) bool {
		n := &nodes[i]
		return textRoles[n.Role] && len(kids[i]) == 0 && len(p.own[i]) == 0 && !n.Focused && !interactive(n)
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if p.kind[i] == lineSkip || len(kids[i]) == 0 {
			continue
		}
		allText := true
		for _, k := range kids[i] {
			if !textLeaf(k) {
				allText = false
			}
		}
		if p.name[i] == "" && allText {
			var words []string
			for _, k := range kids[i] {
				if !wordless(p.name[k]) {
					words = append(words, p.name[k])
				}
			}
			p.name[i] = strings.Join(words, " ")
			if p.value[i] == p.name[i] {
				p.value[i] = ""
			}
		}
		for _, k := range kids[i] {
			if textLeaf(k) && (wordless(p.name[k]) || p.name[i] != "" && strings.Contains(p.name[i], p.name[k])) {
				p.kind[k] = lineFold
			}
		}
	}
}

// foldAnonymous gives an anonymous container (no name, no value, no action
// of its own, not focused, not interactive) no line, its children shown
// at its depth, unless its role is the information (keptRoles).
func (p *plan) foldAnonymous(t *Tree) {
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if p.kind[i] != lineShow {
			continue
		}
		anonymous := p.name[i] == "" && p.value[i] == "" && len(p.own[i]) == 0 && !n.Focused
		if anonymous && !interactive(n) && !keptRoles[n.Role] {
			p.kind[i] = lineFold
		}
	}
}

// foldLabels gives no line to a label whose text is the name of an
// interactive sibling: the control carries the name.
func (p *plan) foldLabels(t *Tree, kids [][]int) {
	nodes := t.Nodes
	for i := range nodes {
		if p.kind[i] != lineShow || nodes[i].Role != "label" || p.name[i] == "" || len(p.own[i]) > 0 {
			continue
		}
		q := parentOf(nodes, i)
		if q < 0 {
			continue
		}
		for _, k := range kids[q] {
			if k != i && interactive(&nodes[k]) && p.name[k] == p.name[i] {
				p.kind[i] = lineFold
				break
			}
		}
	}
}

// markOffscreen marks the elements outside their window or the viewports
// above them "offscreen", those cut by an edge "partly offscreen"; on
// AT-SPI a named node without extents under one scrolled away is
// offscreen too.
func (p *plan) markOffscreen(t *Tree) {
	nodes := t.Nodes
	stateless := t.Source == aci.SourceATSPI
	clip := make([]image.Rectangle, len(nodes))
	away := make([]bool, len(nodes)) // no extents, under a node scrolled away
	for i := range nodes {
		n := &nodes[i]
		q := parentOf(nodes, i)
		c := image.Rectangle{}
		if q >= 0 && !roles.PopupOwner(nodes[q].Role) {
			// A pop-up (a combo box's list, a menu's items) lies in a
			// window of its own, often past its owner's window.
			c = clip[q]
		}
		if p.kind[i] == lineSkip {
			continue
		}
		box := n.BBox
		if box.Empty() && stateless && q >= 0 && (away[q] || !nodes[q].BBox.Empty() && !c.Empty()) {
			// AT-SPI toolkits give a showing node scrolled out of its
			// view no extents (GTK's tree rows), nor its children.
			away[i] = true
			if p.name[i] != "" {
				p.mark[i] = "offscreen"
			}
		}
		if !box.Empty() {
			if !c.Empty() {
				switch {
				case !box.Overlaps(c):
					p.mark[i] = "offscreen"
				case area(box.Intersect(c)) < partlyShown*area(box):
					p.mark[i] = "partly offscreen"
				}
			}
			if clipRoles[n.Role] || q >= 0 && parentOf(nodes, q) < 0 || scrolls(n) {
				if c.Empty() {
					c = box
				} else {
					c = c.Intersect(box)
				}
			}
		}
		clip[i] = c
	}
}

// partlyShown is the share of an element's area under which it is marked
// partly offscreen: cells whose text spills a few pixels past their column
// are not.
const partlyShown = 0.8

func area(r image.Rectangle) float64 { return float64(r.Dx()) * float64(r.Dy()) }

// scrolls reports whether a node scrolls its content (a browser's
// scrollable element).
func scrolls(n *Node) bool {
	return slices.ContainsFunc(n.Actions, func(a string) bool { return strings.HasPrefix(a, "scroll") })
}

type rendered struct {
	full  string
	diff  string      // empty when no diff was asked for, or it was too long
	shown []*refEntry // the elements that got a line, in order
	// added and changed index the nodes whose lines are new or changed
	// since rev-1; removed lists the refs that lost their line.
	added, changed []int
	removed        []int
}

// render renders t in full and, when diff is set, as a diff against the
// revision rev-1 whose shown elements are prev. Each element's entry keeps
// the line it was given, so the next diff compares against it. With all
// set, hidden subtrees are rendered too; common is as for makePlan.
func render(t *Tree, entries []*refEntry, prev []*refEntry, rev int, diff, all bool, common *[]string) rendered {
	pl := makePlan(t, all, common)
	var b, d strings.Builder
	b.Grow(len(t.Nodes) * 32)
	writeHeader(&b, t, rev, pl.common)
	if diff {
		d.WriteString("# diff rev ")
		d.WriteString(strconv.Itoa(rev))
		d.WriteString(" of rev ")
		d.WriteString(strconv.Itoa(rev - 1))
		d.WriteByte('\n')
	}
	var r rendered
	focus := r.writeLines(&b, &d, t, entries, pl, rev, diff)
	trailer := writeTrailer(&b, t, pl.left, focus)
	r.full = b.String()
	for _, e := range prev {
		if e.shown != rev {
			r.removed = append(r.removed, e.n)
		}
	}
	slices.Sort(r.removed)
	if diff {
		r.diff = r.finishDiff(&d, rev, trailer)
	}
	return r
}

// writeHeader writes the first lines: what the tree is of, its revision,
// why it was cut short, and the actions left off every line.
func writeHeader(b *strings.Builder, t *Tree, rev int, common []string) {
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
	if len(common) > 0 {
		b.WriteString("# most elements also have actions (not repeated below): ")
		b.WriteString(strings.Join(common, ","))
		b.WriteByte('\n')
	}
}

// writeLines writes one line an element the plan shows, indented under
// its shown parent, to b, and to d those added ("+") or changed ("~")
// since rev-1 when diff is set; it records them in r and returns the
// focused element's ref name ("" for none).
func (r *rendered) writeLines(b, d *strings.Builder, t *Tree, entries []*refEntry, pl *plan, rev int, diff bool) string {
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
		if pl.kind[i] != lineShow {
			level[i] = lv
			continue
		}
		level[i] = lv + 1
		line = appendLine(line[:0], n, e.n, pl, i)
		for range lv {
			b.WriteString("  ")
		}
		b.Write(line)
		b.WriteByte('\n')
		mark := ""
		switch {
		case e.shown != rev-1:
			mark = "+ "
			r.added = append(r.added, i)
		case e.line != string(line): // compared without allocating
			mark = "~ "
			r.changed = append(r.changed, i)
		}
		if mark != "" {
			e.line = string(line)
			if diff {
				d.WriteString(mark)
				d.Write(line)
				d.WriteByte('\n')
			}
		}
		e.shown = rev
		r.shown = append(r.shown, e)
	}
	return focus
}

// writeTrailer writes the other windows, the count of hidden elements and
// the focus line, and returns the focus line (the diff ends with it too).
func writeTrailer(b *strings.Builder, t *Tree, left int, focus string) string {
	switch {
	case len(t.OtherWindows) > 0:
		b.WriteString("other windows: ")
		for i, w := range t.OtherWindows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(cut(w.Title)))
			b.WriteString(" (window_id ")
			b.WriteString(strconv.FormatUint(w.ID, 10))
			b.WriteByte(')')
		}
		b.WriteByte('\n')
	case len(t.Others) > 0:
		b.WriteString("other windows: ")
		for i, o := range t.Others {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(cut(o)))
		}
		b.WriteByte('\n')
	}
	if left > 0 {
		b.WriteString("hidden: ")
		b.WriteString(strconv.Itoa(left))
		b.WriteString(" elements not shown (observe with an element_ref target shows its subtree whole)\n")
	}
	trailer := "focus: none"
	if focus != "" {
		trailer = "focus: " + focus
	}
	b.WriteString(trailer)
	return trailer
}

// finishDiff ends the diff d with the removed refs and the trailer, and
// returns it, or "" when it is longer than half the full rendering (and
// than diffMinBudget lines): the full form serves better then.
func (r *rendered) finishDiff(d *strings.Builder, rev int, trailer string) string {
	changes := len(r.added) + len(r.changed)
	if len(r.removed) > 0 {
		d.WriteString("- removed: ")
		d.WriteString(refRanges(r.removed))
		d.WriteByte('\n')
		changes++
	}
	if changes > diffMinBudget && changes > len(r.shown)/2 {
		return ""
	}
	if changes == 0 {
		d.WriteString("(no changes since rev ")
		d.WriteString(strconv.Itoa(rev - 1))
		d.WriteString(")\n")
	}
	d.WriteString(trailer)
	return d.String()
}

func appendLine(b []byte, n *Node, ref int, pl *plan, i int) []byte {
	b = append(b, 'e')
	b = strconv.AppendInt(b, int64(ref), 10)
	b = append(b, ' ')
	b = append(b, n.Role...)
	b = appendStates(b, n, pl.mark[i])
	if name := pl.name[i]; name != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, cut(name))
	}
	if v := pl.value[i]; v != "" {
		b = append(b, " Value:"...)
		b = strconv.AppendQuote(b, cut(v))
	}
	if acts := pl.own[i]; len(acts) > 0 {
		b = append(b, " Actions:"...)
		for i, a := range acts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, a...)
		}
	}
	return b
}

func appendStates(b []byte, n *Node, mark string) []byte {
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
		if !has(n, "enabled") && !has(n, "sensitive") && n.Role != "application" {
			add("disabled")
		}
		if !has(n, "showing") {
			add("hidden")
		}
	}
	if mark != "" {
		add(mark)
	}
	isText := n.Role == "text" || n.Role == "entry" || n.Role == "password text"
	if isText && len(n.States) > 0 && !has(n, "editable") {
		add("read only")
	}
	for _, s := range n.States {
		switch {
		case quietStates[s]:
		case isText && (s == "editable" || s == "single line"):
		case s == "read only" && (isText || n.Role == "label" || n.Role == "static"):
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
