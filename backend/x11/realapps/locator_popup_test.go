package realapps

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// A callLog keeps the runtime's actions and observations as its Recorder
// is told them, so that a test sees how a locator did what it was asked.
type callLog struct {
	mu     sync.Mutex
	events []shinken.Event
}

func (l *callLog) Record(e shinken.Event) {
	if e.Kind != shinken.EventAction && e.Kind != shinken.EventObservation {
		return
	}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// since returns the events of the calls made after the call id, in the
// order the client made them: the number in their call ids. The runtime
// tells a call once it has answered it, on the call's own goroutine, so
// two calls in a row may be told the other way round, and a call made
// before id may be told after it.
func (l *callLog) since(id string) []shinken.Event {
	after := callNumber(id)
	l.mu.Lock()
	var evs []shinken.Event
	for _, e := range l.events {
		if callNumber(e.CallID) > after {
			evs = append(evs, e)
		}
	}
	l.mu.Unlock()
	slices.SortStableFunc(evs, func(a, b shinken.Event) int { return int(callNumber(a.CallID) - callNumber(b.CallID)) })
	return evs
}

// callNumber is the number of a client's call id ("c12": 12).
func callNumber(id string) int64 {
	n, _ := strconv.ParseInt(strings.TrimLeft(id, "abcdefghijklmnopqrstuvwxyz"), 10, 64)
	return n
}

// A treeLine is one element's line of a tree_text.
type treeLine struct {
	ref, role, name string
	states          []string
	indent          int
}

// parseTreeLine reads a tree_text line: `  e7 menu item (selected) "Red"`.
func parseTreeLine(line string) (treeLine, bool) {
	rest := strings.TrimLeft(line, " ")
	l := treeLine{indent: len(line) - len(rest)}
	var ok bool
	l.ref, rest, ok = strings.Cut(rest, " ")
	if !ok || len(l.ref) < 2 || l.ref[0] != 'e' {
		return l, false
	}
	end := len(rest)
	for _, sep := range []string{" (", ` "`, " Value:"} {
		if i := strings.Index(rest, sep); i >= 0 && i < end {
			end = i
		}
	}
	l.role, rest = rest[:end], rest[end:]
	if strings.HasPrefix(rest, " (") {
		if i := strings.IndexByte(rest, ')'); i > 0 {
			l.states = strings.Split(rest[2:i], ", ")
			rest = rest[i+1:]
		}
	}
	if strings.HasPrefix(rest, ` "`) {
		if q, err := strconv.QuotedPrefix(rest[1:]); err == nil {
			l.name, _ = strconv.Unquote(q)
		}
	}
	return l, true
}

// visible reports whether the line marks its element neither hidden nor
// offscreen, as the locators read it.
func (l treeLine) visible() bool {
	return !slices.Contains(l.states, "hidden") && !slices.Contains(l.states, "offscreen")
}

// optionRoles are the roles a pop-up's choice takes in the applications
// tested: GTK's and Firefox's menu items, Chromium's list box options, Qt's
// list items.
var optionRoles = []string{"menu item", "list item", "option", "radio menu item", "check menu item", "table cell", "tree item"}

// choiceIn finds, in tree, the line of ref and its parent's line.
func choiceIn(tree, ref string) (line, parent treeLine, found bool) {
	var stack []treeLine
	for _, text := range strings.Split(tree, "\n") {
		l, ok := parseTreeLine(text)
		if !ok {
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= l.indent {
			stack = stack[:len(stack)-1]
		}
		if l.ref == ref {
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			return l, parent, true
		}
		stack = append(stack, l)
	}
	return treeLine{}, treeLine{}, false
}

// subtreeText returns the lines of ref's subtree in tree, its own first,
// or "" when tree lacks it.
func subtreeText(tree, ref string) string {
	var b strings.Builder
	indent := -1
	for _, text := range strings.Split(tree, "\n") {
		l, ok := parseTreeLine(text)
		switch {
		case indent < 0 && ok && l.ref == ref:
			indent = l.indent
		case indent < 0:
			continue
		case !ok || l.indent <= indent:
			return b.String()
		}
		b.WriteString(text + "\n")
	}
	return b.String()
}

// poppedUp says how the calls evs, those of one SelectOption of option,
// chose it, or why not through the application's pop-up: the locator must
// have clicked the box, then the element of a choice's role named option
// that an observation after the first click showed visible in a pop-up
// (its parent) that the click changed, and set no value, typed nothing
// and pressed no key but before the box's click (the locator's Escape,
// closing a pop-up over the box). A pop-up changed when its subtree reads
// otherwise after the click than in the last observation before it, or
// took the focus: GTK's and the browsers' choices turn from hidden to
// visible; Qt's list, whose choices Qt shows visible when closed, gains
// the focus.
func poppedUp(evs []shinken.Event, option string) (string, error) {
	var clicks []shinken.Event
	for _, e := range evs {
		if e.Kind != shinken.EventAction {
			continue
		}
		switch e.Verb {
		case aci.VerbClick:
			if e.OK {
				clicks = append(clicks, e)
			}
		case aci.VerbKey:
			if len(clicks) == 0 {
				// Before the box's click: the locator's Escape, closing a
				// pop-up over the box (a browser's suggestions for the
				// field typed in last). The choice is still the click's.
				continue
			}
			fallthrough
		case aci.VerbSetValue, aci.VerbTypeText, aci.VerbInvokeAction:
			return "", fmt.Errorf("it chose by %s %s, not through the pop-up (calls refused before: %s); the last look before:\n%s", e.Verb, e.Target, refused(evs), lastTree(evs, e.CallID))
		}
	}
	if len(clicks) != 2 {
		return "", fmt.Errorf("%d clicks, not the box's and then the choice's (told so far: %s)", len(clicks), verbs(evs))
	}
	opened, took := callNumber(clicks[0].CallID), callNumber(clicks[1].CallID)
	var closed string // the last look before the box was clicked
	for _, e := range evs {
		if e.Kind == shinken.EventObservation && callNumber(e.CallID) < opened {
			closed = e.TreeText
		}
	}
	seen := false
	for _, e := range evs {
		if n := callNumber(e.CallID); e.Kind != shinken.EventObservation || n < opened || n > took {
			continue
		}
		l, popup, ok := choiceIn(e.TreeText, clicks[1].Target)
		if !ok || l.name != option || !slices.Contains(optionRoles, l.role) || !l.visible() || popup.ref == "" {
			continue
		}
		seen = true
		open := subtreeText(e.TreeText, popup.ref)
		if open != subtreeText(closed, popup.ref) || focusIn(e.TreeText, open) && !focusIn(closed, subtreeText(closed, popup.ref)) {
			return fmt.Sprintf("%s %q in the pop-up's %s", clicks[1].Target, option, popup.role), nil
		}
	}
	if !seen {
		return "", fmt.Errorf("no observation between the two clicks shows %s as a visible choice %q", clicks[1].Target, option)
	}
	return "", fmt.Errorf("the pop-up of %s read the same after the box was clicked as before (neither its choices nor the focus changed):\n%s", clicks[1].Target, closed)
}

// focusIn reports whether the focus line of tree ("focus: e11") names an
// element of sub, lines of tree.
func focusIn(tree, sub string) bool {
	for _, text := range strings.Split(tree, "\n") {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(text), "focus: "); ok {
			for _, line := range strings.Split(sub, "\n") {
				if l, ok := parseTreeLine(line); ok && l.ref == ref {
					return true
				}
			}
		}
	}
	return false
}

// lastTree is the tree_text of the last observation of evs before the
// call id.
func lastTree(evs []shinken.Event, id string) string {
	tree := "(none)"
	for _, e := range evs {
		if e.Kind == shinken.EventObservation && callNumber(e.CallID) < callNumber(id) {
			tree = e.TreeText
		}
	}
	return tree
}

// refused lists the calls of evs that were refused, for a message.
func refused(evs []shinken.Event) string {
	var s []string
	for _, e := range evs {
		if e.Kind == shinken.EventAction && !e.OK {
			s = append(s, string(e.Verb)+" "+e.Target+": "+e.Error)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}

// verbs lists the actions of evs, for a message.
func verbs(evs []shinken.Event) string {
	var s []string
	for _, e := range evs {
		if e.Kind == shinken.EventAction {
			s = append(s, string(e.Verb)+" "+e.Target)
		}
	}
	return strings.Join(s, ", ")
}

// selectThroughPopup selects option with box and checks, in the calls it
// made, that it chose it through the pop-up the application showed (see
// poppedUp). It returns what the choice was, for the log.
func (d *desk) selectThroughPopup(t *testing.T, box *client.Locator, option string) string {
	t.Helper()
	// An observation of the test's own marks where the calls of
	// SelectOption start: every call made after it has a greater number.
	mark, err := d.c.Observe(t.Context(), &client.ObserveRequest{})
	must(t, "observe", err)
	start := time.Now()
	must(t, "select "+option, box.SelectOption(t.Context(), option))
	if took := time.Since(start); took > 10*time.Second {
		t.Logf("select %q took %v", option, took.Round(time.Millisecond))
	}
	// The runtime tells a call just after answering it: the last calls
	// may be told a moment after SelectOption returned. Events are only
	// added, so the check is polled until it holds or the deadline.
	deadline := time.Now().Add(10 * time.Second)
	for {
		seen, err := poppedUp(d.calls.since(mark.CallID), option)
		if err == nil {
			return seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("select %q: %v", option, err)
		}
		time.Sleep(20 * time.Millisecond) // polls for the calls still to be told
	}
}

// TestPoppedUp checks the pop-up check on calls as a runtime tells them:
// a choice taken in the pop-up passes; a value set, a choice showing
// before the box was clicked, or a click elsewhere fails.
func TestPoppedUp(t *testing.T) {
	closed := "e1 frame (active) \"Order\"\n  e5 combo box \"Red\"\n    e6 menu (hidden)\n      e8 menu item (hidden) \"Green\"\n"
	open := "e1 frame (active) \"Order\"\n  e5 combo box \"Red\"\n    e6 menu\n      e7 menu item \"Red\"\n      e8 menu item \"Green\"\n"
	qtClosed := "e2 filler (active) \"Qt form\"\n  e8 combo box \"Red\"\n    e9 list\n      e10 list item \"Red\"\n      e11 list item \"Green\"\n  e14 spin button \"Count\"\n"
	qtOpen := "e2 filler (active) \"Qt form\"\n  e8 combo box \"Red\"\n    e9 list\n      e10 list item (focused, selected) \"Red\"\n      e11 list item \"Green\"\n  e14 spin button \"Count\"\nfocus: e10\n"
	// Qt's closed list keeps its last choice focused and selected.
	qtClosedAgain := "e2 filler (active) \"Qt form\"\n  e8 combo box \"Red\"\n    e9 list\n      e10 list item (focused, selected) \"Red\"\n      e11 list item \"Green\"\n  e14 spin button \"Count\"\nfocus: e14\n"
	obs := func(id, tree string) shinken.Event {
		return shinken.Event{Kind: shinken.EventObservation, CallID: id, TreeText: tree}
	}
	act := func(id string, verb aci.Verb, target string) shinken.Event {
		return shinken.Event{Kind: shinken.EventAction, CallID: id, Verb: verb, Target: target, OK: true}
	}
	for _, c := range []struct {
		name string
		evs  []shinken.Event
		want string // "" when it must fail
	}{
		{"through the pop-up", []shinken.Event{obs("c1", closed), obs("c2", closed), act("c3", aci.VerbClick, "e5"), obs("c4", open), act("c5", aci.VerbClick, "e8"), obs("c6", closed)},
			`e8 "Green" in the pop-up's menu`},
		{"told out of order", []shinken.Event{obs("c1", closed), act("c3", aci.VerbClick, "e5"), act("c5", aci.VerbClick, "e8"), obs("c4", open)},
			`e8 "Green" in the pop-up's menu`},
		{"a pop-up over the box closed first", []shinken.Event{obs("c1", closed), act("c2", aci.VerbKey, ""), obs("c3", closed), act("c4", aci.VerbClick, "e5"), obs("c5", open), act("c6", aci.VerbClick, "e8")},
			`e8 "Green" in the pop-up's menu`},
		{"a key after the box's click", []shinken.Event{obs("c1", closed), act("c2", aci.VerbClick, "e5"), obs("c3", open), act("c4", aci.VerbKey, ""), act("c5", aci.VerbClick, "e8")}, ""},
		{"by set_value", []shinken.Event{obs("c1", closed), act("c2", aci.VerbClick, "e5"), obs("c3", closed), act("c4", aci.VerbSetValue, "e5")}, ""},
		{"showing before the click, unchanged", []shinken.Event{obs("c1", open), act("c2", aci.VerbClick, "e5"), obs("c3", open), act("c4", aci.VerbClick, "e8")}, ""},
		{"showing before the click, then focused (Qt)", []shinken.Event{obs("c1", qtClosed), act("c2", aci.VerbClick, "e8"), obs("c3", qtOpen), act("c4", aci.VerbClick, "e11")},
			`e11 "Green" in the pop-up's list`},
		{"Qt's list, its last choice kept, takes the focus", []shinken.Event{obs("c1", qtClosedAgain), act("c2", aci.VerbClick, "e8"), obs("c3", qtClosedAgain), obs("c4", qtOpen), act("c5", aci.VerbClick, "e11")},
			`e11 "Green" in the pop-up's list`},
		{"Qt's list, unchanged", []shinken.Event{obs("c1", qtClosedAgain), act("c2", aci.VerbClick, "e8"), obs("c3", qtClosedAgain), act("c4", aci.VerbClick, "e11")}, ""},
		{"a click on another element", []shinken.Event{obs("c1", closed), act("c2", aci.VerbClick, "e5"), obs("c3", open), act("c4", aci.VerbClick, "e7")}, ""},
		{"one click", []shinken.Event{obs("c1", closed), act("c2", aci.VerbClick, "e5"), obs("c3", open)}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &callLog{}
			for _, e := range c.evs {
				l.Record(e)
			}
			got, err := poppedUp(l.since("c0"), "Green")
			switch {
			case c.want == "" && err == nil:
				t.Fatalf("passed (%s), want a failure", got)
			case c.want != "" && err != nil:
				t.Fatalf("failed: %v", err)
			case got != c.want:
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	// A set_value made before the test's mark (c1), told after the
	// SelectOption's calls, is not one of them.
	l := &callLog{}
	for _, e := range []shinken.Event{obs("c2", closed), act("c3", aci.VerbClick, "e5"), obs("c4", open), act("c5", aci.VerbClick, "e8"), act("c0", aci.VerbSetValue, "e3")} {
		l.Record(e)
	}
	if _, err := poppedUp(l.since("c1"), "Green"); err != nil {
		t.Fatalf("a call before the mark counted: %v", err)
	}
}
