package atspi

import "strconv"

// roleNames maps AT-SPI role numbers (AtspiRole) to the names AT-SPI
// clients report: the enum's names in lower case with spaces. Role 43 keeps
// its classic name "push button", which libatspi 2.46 and ATK report and
// the protocol's examples use.
var roleNames = [...]string{
	"invalid", "accelerator label", "alert", "animation", "arrow", "calendar", "canvas",
	"check box", "check menu item", "color chooser", "column header", "combo box",
	"date editor", "desktop icon", "desktop frame", "dial", "dialog", "directory pane",
	"drawing area", "file chooser", "filler", "focus traversable", "font chooser", "frame",
	"glass pane", "html container", "icon", "image", "internal frame", "label",
	"layered pane", "list", "list item", "menu", "menu bar", "menu item", "option pane",
	"page tab", "page tab list", "panel", "password text", "popup menu", "progress bar",
	"push button", "radio button", "radio menu item", "root pane", "row header",
	"scroll bar", "scroll pane", "separator", "slider", "spin button", "split pane",
	"status bar", "table", "table cell", "table column header", "table row header",
	"tearoff menu item", "terminal", "text", "toggle button", "tool bar", "tool tip",
	"tree", "tree table", "unknown", "viewport", "window", "extended", "header", "footer",
	"paragraph", "ruler", "application", "autocomplete", "editbar", "embedded", "entry",
	"chart", "caption", "document frame", "heading", "page", "section",
	"redundant object", "form", "link", "input method window", "table row", "tree item",
	"document spreadsheet", "document presentation", "document text", "document web",
	"document email", "comment", "list box", "grouping", "image map", "notification",
	"info bar", "level bar", "title bar", "block quote", "audio", "video", "definition",
	"article", "landmark", "log", "marquee", "math", "rating", "timer", "static",
	"math fraction", "math root", "subscript", "superscript", "description list",
	"description term", "description value", "footnote", "content deletion",
	"content insertion", "mark", "suggestion", "push button menu", "switch",
}

// Role numbers the walk treats specially.
const (
	roleScrollBar  = 48
	roleScrollPane = 49
	roleViewport   = 68

	roleDocumentFrame = 82
	roleDocumentWeb   = 95
)

// roleName names role n; a role newer than this table is "role <n>".
func roleName(n uint32) string {
	if int(n) < len(roleNames) {
		return roleNames[n]
	}
	return "role " + strconv.FormatUint(uint64(n), 10)
}

// stateNames maps AT-SPI state numbers (AtspiStateType), the bit positions
// of the two-word state set, to their names.
var stateNames = [...]string{
	"invalid", "active", "armed", "busy", "checked", "collapsed", "defunct", "editable",
	"enabled", "expandable", "expanded", "focusable", "focused", "has tooltip",
	"horizontal", "iconified", "modal", "multi line", "multiselectable", "opaque",
	"pressed", "resizable", "selectable", "selected", "sensitive", "showing",
	"single line", "stale", "transient", "vertical", "visible", "manages descendants",
	"indeterminate", "required", "truncated", "animated", "invalid entry",
	"supports autocompletion", "selectable text", "is default", "visited", "checkable",
	"has popup", "read only",
}

// State numbers the walk and the element verbs look at.
const (
	stateActive             = 1
	stateDefunct            = 6
	stateEditable           = 7
	stateFocused            = 12
	stateShowing            = 25
	stateTransient          = 28
	stateManagesDescendants = 31
)

// stateSet is AT-SPI's state bitset: bit n of the 64 is state n.
type stateSet [2]uint32

func (s stateSet) has(n int) bool { return s[n/32]&(1<<(n%32)) != 0 }

// names lists the set's states in numeric order.
func (s stateSet) names() []string {
	var out []string
	for n := 1; n < 64; n++ {
		if !s.has(n) {
			continue
		}
		if n < len(stateNames) {
			out = append(out, stateNames[n])
		} else {
			out = append(out, "state "+strconv.Itoa(n))
		}
	}
	return out
}
