package client

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"shinken.dev/go/shinken/aci"
)

// DefaultLocatorTimeout bounds a Locator's wait, and an Expectation's,
// unless Locator.WithTimeout says otherwise; ctx may end it sooner.
const DefaultLocatorTimeout = 10 * time.Second

// ErrStrict is wrapped by a locator's error when several elements match
// where one must (it names them): narrow it, or pick one (Locator.Nth,
// First, Last).
var ErrStrict = errors.New("shinken: more than one element matches")

// By says which elements a Locator matches: Role and Value, when not empty,
// must equal the element's; at most one of Name, NameContains and NameRegexp
// may be set (a Locator with two refuses to act); each of States must be
// among the element's.
type By struct {
	Role         string
	Name         string         // equals the element's name
	NameContains string         // is a part of the element's name
	NameRegexp   *regexp.Regexp // matches the element's name
	Value        string
	States       []string
}

// A Locator names an element by what it is (role, name, value, states), not
// by a ref: it finds the element anew at each use and holds no ref past one
// action. Made by Client.ByRole or Client.Locate, it is immutable: its
// methods return new Locators.
//
// Before an action it waits, for at most DefaultLocatorTimeout or ctx's
// deadline, until exactly one element matches, showing, enabled, stable (the
// same box in two reads) and under no pop-up's item; a pop-up left over it
// (a browser's suggestions, a menu) is closed with Escape, once. An action
// refused as aci.ErrStaleElementRef is tried once more on the element found
// anew. A wait that ends is a *LocatorError saying what was missing; several
// matches refuse at once, naming them (ErrStrict).
type Locator struct {
	c       *Client
	parent  *Locator
	by      By
	window  uint64
	desktop bool
	index   *int // nil: strict; >= 0 from the first; < 0 from the last
	timeout time.Duration
}

// ByRole returns a Locator of the element with that role and name ("" for
// any), roles as observations show them ("push button", "text"...).
func (c *Client) ByRole(role, name string) *Locator {
	return c.Locate(By{Role: role, Name: name})
}

// Locate returns a Locator of the elements by describes.
func (c *Client) Locate(by By) *Locator {
	return &Locator{c: c, by: by}
}

// ByRole returns a Locator of the element under l's element (its descendants
// only) with that role and name.
func (l *Locator) ByRole(role, name string) *Locator {
	return l.Locate(By{Role: role, Name: name})
}

// Locate returns a Locator of the elements under l's element (its
// descendants only) that by describes; l must name one element when used.
func (l *Locator) Locate(by By) *Locator {
	return &Locator{c: l.c, parent: l, by: by, timeout: l.timeout}
}

func (l *Locator) with(f func(*Locator)) *Locator {
	n := *l
	f(&n)
	return &n
}

// Nth returns a Locator of the i-th element l matches, in tree order from 0,
// or from the end when i is negative (-1 the last). It is not strict.
func (l *Locator) Nth(i int) *Locator { return l.with(func(n *Locator) { n.index = &i }) }

// First is Nth(0).
func (l *Locator) First() *Locator { return l.Nth(0) }

// Last is Nth(-1).
func (l *Locator) Last() *Locator { return l.Nth(-1) }

// InWindow returns l looking only in the top-level window with id (see
// Client.ListWindows), not in the active application.
func (l *Locator) InWindow(id uint64) *Locator {
	return l.with(func(n *Locator) { n.window, n.desktop = id, false })
}

// OnDesktop returns l looking in every application, not just the active
// one.
func (l *Locator) OnDesktop() *Locator {
	return l.with(func(n *Locator) { n.desktop, n.window = true, 0 })
}

// WithTimeout returns l waiting at most d, not DefaultLocatorTimeout, to
// act, answer or expect; Locators made from it inherit d.
func (l *Locator) WithTimeout(d time.Duration) *Locator {
	return l.with(func(n *Locator) { n.timeout = d })
}

// String describes l the way its errors do: `push button "Submit"`.
func (l *Locator) String() string {
	var b strings.Builder
	role := l.by.Role
	if role == "" {
		role = "element"
	}
	b.WriteString(role)
	switch {
	case l.by.Name != "":
		b.WriteString(" " + strconv.Quote(l.by.Name))
	case l.by.NameContains != "":
		b.WriteString(" containing " + strconv.Quote(l.by.NameContains))
	case l.by.NameRegexp != nil:
		b.WriteString(" matching /" + l.by.NameRegexp.String() + "/")
	}
	if l.by.Value != "" {
		b.WriteString(" with value " + strconv.Quote(l.by.Value))
	}
	if len(l.by.States) > 0 {
		b.WriteString(" (" + strings.Join(l.by.States, ", ") + ")")
	}
	switch {
	case l.index == nil:
	case *l.index == 0:
		b.WriteString(" (first)")
	case *l.index == -1:
		b.WriteString(" (last)")
	default:
		b.WriteString(" #" + strconv.Itoa(*l.index))
	}
	if l.window != 0 {
		b.WriteString(" in window " + strconv.FormatUint(l.window, 10))
	}
	if l.parent != nil {
		b.WriteString(" in " + l.parent.String())
	}
	return b.String()
}

// A LocatorError says why a Locator could not act or answer: what was
// missing when its wait ended. Err is aci.ErrTimeout (wrapping
// aci.ErrNoMatch when nothing matched), ErrStrict, the context's error, or
// the runtime's refusal.
type LocatorError struct {
	Op      string        // "click", "fill", "text"...
	Locator string        // the Locator, described
	Missing string        // what was missing: "is not enabled", "2 elements match: ..."
	After   time.Duration // how long it waited
	Err     error
}

func (e *LocatorError) Error() string {
	msg := "shinken: " + e.Op + ": "
	switch {
	case strings.HasPrefix(e.Missing, "no element") || strings.Contains(e.Missing, "elements match"):
		msg += e.Locator + ": " + e.Missing
	case e.Missing != "":
		msg += e.Locator + " " + e.Missing
	default:
		msg += e.Locator
	}
	if e.After > 0 && !errors.Is(e.Err, ErrStrict) {
		msg += " after " + seconds(e.After)
	}
	// A wait that ended says what was missing; anything else (the
	// runtime's refusal, its own timeout) is said whole.
	if e.Err != nil && (e.Missing == "" || !errors.Is(e.Err, aci.ErrTimeout) && !errors.Is(e.Err, ErrStrict)) {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *LocatorError) Unwrap() error { return e.Err }

func seconds(d time.Duration) string {
	s := d.Seconds()
	if s >= 1 {
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}

// found is what one read of a locator saw.
type found struct {
	l       *Locator
	obs     *aci.Observation // the observation the elements come from
	matches []aci.Element    // after Nth, at most one when an index is set
	all     []aci.Element    // the view's elements l chose from
}

// one returns the element of a read that names exactly one, or what is
// missing: nothing matched (aci.ErrNoMatch) or several did (ErrStrict).
func (f *found) one() (*aci.Element, string, error) {
	switch len(f.matches) {
	case 0:
		return nil, "no element matches" + closest(f.all, f.l), aci.ErrNoMatch
	case 1:
		return &f.matches[0], "", nil
	}
	names := make([]string, 0, len(f.matches))
	for _, e := range f.matches {
		names = append(names, describeElement(&e))
	}
	return nil, fmt.Sprintf("%d elements match: %s", len(f.matches), strings.Join(names, "; ")), ErrStrict
}

// describeElement is an element as errors name it: `e7 push button "Submit"`.
func describeElement(e *aci.Element) string {
	s := e.Ref + " " + e.Role
	if e.Name != "" {
		s += " " + strconv.Quote(e.Name)
	}
	if e.Value != "" {
		s += " value " + strconv.Quote(e.Value)
	}
	return s
}

// closest names, after "; closest: ", up to three elements near to what l
// seeks: of its role with a name like its name (either holding the other,
// ignoring case) first, then of its role, then of another role with such a
// name.
func closest(all []aci.Element, l *Locator) string {
	want := strings.ToLower(l.by.Name + l.by.NameContains)
	like := func(name string) bool {
		if want == "" {
			return false
		}
		n := strings.ToLower(name)
		return n != "" && (strings.Contains(n, want) || strings.Contains(want, n))
	}
	score := func(e *aci.Element) int {
		sameRole := l.by.Role != "" && e.Role == l.by.Role
		switch {
		case sameRole && (like(e.Name) || l.by.NameRegexp != nil && l.by.NameRegexp.MatchString(e.Name)):
			return 3
		case sameRole:
			return 2
		case like(e.Name):
			return 1
		}
		return 0
	}
	var picked []string
	for s := 3; s > 0 && len(picked) < 3; s-- {
		for i := range all {
			if len(picked) < 3 && score(&all[i]) == s {
				picked = append(picked, describeElement(&all[i]))
			}
		}
	}
	if len(picked) == 0 {
		return ""
	}
	return "; closest: " + strings.Join(picked, "; ")
}

func (l *Locator) nameOK(name string) bool {
	switch {
	case l.by.Name != "":
		return name == l.by.Name
	case l.by.NameContains != "":
		return strings.Contains(name, l.by.NameContains)
	case l.by.NameRegexp != nil:
		return l.by.NameRegexp.MatchString(name)
	}
	return true
}

func (l *Locator) matches(e *aci.Element) bool {
	if l.by.Role != "" && e.Role != l.by.Role {
		return false
	}
	if !l.nameOK(e.Name) {
		return false
	}
	if l.by.Value != "" && e.Value != l.by.Value {
		return false
	}
	for _, s := range l.by.States {
		if !slices.Contains(e.States, s) {
			return false
		}
	}
	return true
}

// check refuses a By that asks two things of the name.
func (l *Locator) check() error {
	n := 0
	for _, set := range []bool{l.by.Name != "", l.by.NameContains != "", l.by.NameRegexp != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("shinken: locator %s: By sets more than one of Name, NameContains and NameRegexp", l)
	}
	if l.parent != nil {
		return l.parent.check()
	}
	return nil
}

// read observes l's view once and returns what l matches in it. When l's
// scope, another locator, does not name one element, the error is a
// *scopeMiss.
func (l *Locator) read(ctx context.Context) (*found, error) {
	req := &ObserveRequest{Window: l.window, Desktop: l.desktop}
	var skip string
	if l.parent != nil {
		pf, err := l.parent.read(ctx)
		if err != nil {
			return nil, err
		}
		p, missing, err := pf.one()
		if err != nil {
			return nil, &scopeMiss{missing: "in " + l.parent.String() + ": " + missing, err: err, f: pf}
		}
		req = &ObserveRequest{Subtree: p.Ref}
		skip = p.Ref
	}
	obs, err := l.c.Observe(ctx, req)
	if err != nil {
		return nil, err
	}
	f := &found{l: l, obs: obs}
	for _, e := range obs.Elements {
		if e.Ref == skip {
			continue
		}
		f.all = append(f.all, e)
		if l.matches(&e) {
			f.matches = append(f.matches, e)
		}
	}
	if l.index != nil {
		i := *l.index
		if i < 0 {
			i += len(f.matches)
		}
		if i < 0 || i >= len(f.matches) {
			f.matches = nil
		} else {
			f.matches = f.matches[i : i+1]
		}
	}
	return f, nil
}

// scopeMiss is a read that could not look: its scope, another locator,
// did not name one element.
type scopeMiss struct {
	missing string
	err     error
	f       *found
}

func (r *scopeMiss) Error() string { return r.missing }
func (r *scopeMiss) Unwrap() error { return r.err }

// verdict is what a poll's condition makes of one read.
type verdict struct {
	done    bool
	again   bool   // read again at once (the second read of a stability check)
	missing string // what is missing, when not done
	stop    error  // give up at once with this
}

// pollIntervals are the pauses between reads, the last repeated: quick at
// first, for the UI that is nearly there, then gentler.
var pollIntervals = []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// poll reads l until cond is satisfied with a read, or the wait ends: at
// l's timeout or when ctx ends, the first read always made whole. The
// error is a *LocatorError.
func (l *Locator) poll(ctx context.Context, op string, cond func(f *found) verdict) (*found, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, l.wait())
	defer cancel()
	fail := func(missing string, err error) error {
		return &LocatorError{Op: op, Locator: l.String(), Missing: missing, After: time.Since(start), Err: err}
	}
	ended := func(missing string) error {
		if ctx.Err() == context.Canceled {
			return fail(missing, ctx.Err())
		}
		if strings.HasPrefix(missing, "no element") {
			return fail(missing, errors.Join(aci.ErrTimeout, aci.ErrNoMatch))
		}
		return fail(missing, aci.ErrTimeout)
	}
	// A context already done reads nothing: a read sent with it may
	// still be answered before its end is noticed.
	if ctx.Err() != nil {
		return nil, fail("was not read", ctx.Err())
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	missing := "was not read"
	for n := 0; ; n++ {
		// The first read is bounded by ctx alone, as an attempt is made
		// whatever the timeout: on a loaded machine a short timeout could
		// otherwise end before any read, and say nothing of what was seen.
		rctx := wctx
		if n == 0 {
			rctx = ctx
		}
		f, err := l.read(rctx)
		var v verdict
		var sm *scopeMiss
		switch {
		case errors.As(err, &sm):
			v = verdict{missing: sm.missing}
			if errors.Is(err, ErrStrict) {
				v.stop = ErrStrict
			}
		case err != nil && wctx.Err() != nil:
			return nil, ended(missing)
		case errors.Is(err, aci.ErrStaleElementRef):
			// The scope's element went between two reads: look again.
			v = verdict{missing: "changed while it was read"}
		case err != nil:
			return nil, fail("", err)
		default:
			v = cond(f)
		}
		if v.done {
			return f, nil
		}
		missing = v.missing
		if v.stop != nil {
			return f, fail(missing, v.stop)
		}
		if v.again {
			continue
		}
		timer.Reset(pollIntervals[min(n, len(pollIntervals)-1)])
		select {
		case <-timer.C:
		case <-wctx.Done():
			return nil, ended(missing)
		}
	}
}

// showing reports whether e is on screen: it has the state "showing" (or
// the backend reports no states) and a box of some size.
func showing(e *aci.Element) bool {
	if len(e.BBox) == 4 && (e.BBox[2] <= 0 || e.BBox[3] <= 0) {
		return false
	}
	return len(e.States) == 0 || slices.Contains(e.States, "showing")
}

// visible reports whether e shows in f: showing (see showing), and its
// line of f's tree text marks it neither hidden nor offscreen (the runtime
// marks an element whose box lies outside its window or the screen).
func (f *found) visible(e *aci.Element) bool {
	if !showing(e) {
		return false
	}
	line := treeLine(f.obs.TreeText, e.Ref)
	if i := strings.IndexByte(line, '"'); i >= 0 {
		line = line[:i]
	}
	return !strings.Contains(line, "hidden") && !strings.Contains(line, "offscreen")
}

// treeLine returns the line of tree (a tree_text) that describes ref, or
// "".
func treeLine(tree, ref string) string {
	for len(tree) > 0 {
		line, rest, _ := strings.Cut(tree, "\n")
		if strings.HasPrefix(strings.TrimLeft(line, " "), ref+" ") {
			return line
		}
		tree = rest
	}
	return ""
}

// enabled reports whether e takes input: it has the state "enabled" or
// "sensitive" (or the backend reports no states).
func enabled(e *aci.Element) bool {
	return len(e.States) == 0 || slices.Contains(e.States, "enabled") || slices.Contains(e.States, "sensitive")
}

// popupItemRoles are the roles of the items a pop-up menu shows: an
// element of one of them over another element hides it from the pointer.
var popupItemRoles = []string{"menu item", "check menu item", "radio menu item"}

// cover returns the visible pop-up item (see popupItemRoles) over the
// centre of e's box, where a click on e lands, or nil. An item of e's own
// subtree (a combo box's choice) or one that holds e is none.
func (f *found) cover(e *aci.Element) *aci.Element {
	at := box(e)
	if at.Empty() {
		return nil
	}
	centre := image.Pt((at.Min.X+at.Max.X)/2, (at.Min.Y+at.Max.Y)/2)
	for i := range f.all {
		o := &f.all[i]
		if o.Ref == e.Ref || !slices.Contains(popupItemRoles, o.Role) || !centre.In(box(o)) || !f.visible(o) {
			continue
		}
		if within(f.obs.TreeText, e.Ref, o.Ref) || within(f.obs.TreeText, o.Ref, e.Ref) {
			continue
		}
		return o
	}
	return nil
}

// within reports whether tree (a tree_text) shows inner in outer's
// subtree: on a line below outer's, more indented, with no line as little
// indented as outer's between them.
func within(tree, outer, inner string) bool {
	indent := -1
	for len(tree) > 0 {
		var line string
		line, tree, _ = strings.Cut(tree, "\n")
		rest := strings.TrimLeft(line, " ")
		ref, _, _ := strings.Cut(rest, " ")
		n := len(line) - len(rest)
		switch {
		case indent < 0:
			if ref == outer {
				indent = n
			}
		case n <= indent:
			return false
		case ref == inner:
			return true
		}
	}
	return false
}

// actionable waits until l names one element, showing, enabled when
// needEnabled says so, stable (its box the same in two reads in a row)
// and under no pop-up's item (see cover; it presses Escape once to close
// the pop-up), and returns it.
func (l *Locator) actionable(ctx context.Context, op string, needEnabled bool) (*aci.Element, error) {
	var prev *aci.Element
	escaped := false
	f, err := l.poll(ctx, op, func(f *found) verdict {
		e, missing, err := f.one()
		switch {
		case errors.Is(err, ErrStrict):
			return verdict{missing: missing, stop: err}
		case err != nil:
			prev = nil
			return verdict{missing: missing}
		case !f.visible(e):
			prev = nil
			return verdict{missing: "is not visible"}
		case needEnabled && !enabled(e):
			prev = nil
			return verdict{missing: "is not enabled"}
		case prev == nil || prev.Ref != e.Ref || !slices.Equal(prev.BBox, e.BBox):
			again := prev == nil
			prev = e
			return verdict{missing: "is not stable (its box moves)", again: again}
		}
		if over := f.cover(e); over != nil {
			prev = nil
			missing := "is under " + describeElement(over) + ", a pop-up's"
			if escaped {
				return verdict{missing: missing}
			}
			// A person closes the pop-up that hides what they want
			// (the suggestions a browser lists under a field just
			// typed in, a menu left open) with Escape, which goes to
			// the pop-up or to the field that owns it.
			escaped = true
			if err := l.c.Key(ctx, "Escape"); err != nil {
				return verdict{missing: missing, stop: err}
			}
			return verdict{missing: missing, again: true}
		}
		return verdict{done: true}
	})
	if err != nil {
		return nil, err
	}
	e, _, _ := f.one()
	return e, nil
}

// act waits until l is actionable and does do with its element. When the
// runtime answers stale_element_ref (the element went between the read
// and the action), it finds the element anew and does it once more; when
// it answers element_not_actionable (a modal dialog over it, a field that
// did not take the text yet), it waits and tries again, within l's
// timeout, like any other wait for actionability.
func (l *Locator) act(ctx context.Context, op string, needEnabled bool, do func(ctx context.Context, e *aci.Element) error) error {
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, l.wait())
	defer cancel()
	stale := false
	var refused error
	for n := 0; ; n++ {
		e, err := l.actionable(actx, op, needEnabled)
		if err != nil {
			if refused != nil && ctx.Err() == nil {
				return &LocatorError{Op: op, Locator: l.String(), Missing: "refused the action", After: time.Since(start), Err: refused}
			}
			return err
		}
		err = do(actx, e)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, aci.ErrStaleElementRef) && !stale:
			stale = true
			continue
		case errors.Is(err, aci.ErrElementNotActionable) && actx.Err() == nil:
			refused = err
			t := time.NewTimer(pollIntervals[len(pollIntervals)-1])
			select {
			case <-t.C:
			case <-actx.Done():
			}
			t.Stop()
			continue
		}
		var le *LocatorError
		if errors.As(err, &le) {
			return err
		}
		return &LocatorError{Op: op, Locator: l.String(), Err: err}
	}
}

// wait is how long l waits.
func (l *Locator) wait() time.Duration {
	if l.timeout > 0 {
		return l.timeout
	}
	return DefaultLocatorTimeout
}

// box is an element's box as a rectangle.
func box(e *aci.Element) image.Rectangle {
	if len(e.BBox) != 4 {
		return image.Rectangle{}
	}
	x, y := int(math.Round(e.BBox[0])), int(math.Round(e.BBox[1]))
	return image.Rect(x, y, x+int(math.Round(e.BBox[2])), y+int(math.Round(e.BBox[3])))
}
