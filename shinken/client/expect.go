package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"shinken.dev/go/shinken/aci"
)

// An Expectation is a condition on a Locator's element: each To method reads
// the element until the condition holds, for at most the Locator's timeout
// or until ctx ends; then its error is an *ExpectError saying what was
// expected, what was last seen, and the tree around the element. Every
// condition but ToHaveCount is strict, as actions are: several matches fail
// it at once. One on the element (enabled, checked, a value, a text, a
// state) is unmet, both ways, while none matches: Not().ToBeEnabled() waits
// for a disabled element, not for none.
type Expectation struct {
	l   *Locator
	not bool
}

// Expect returns the expectations on l; shinkentest.Expect wraps them.
func (l *Locator) Expect() *Expectation { return &Expectation{l: l} }

// Not returns the opposite: Not().ToBeChecked() waits until it is unchecked.
func (e *Expectation) Not() *Expectation { return &Expectation{l: e.l, not: !e.not} }

// An ExpectError is an expectation that did not hold in time.
type ExpectError struct {
	Locator  string        // the Locator, described
	Expected string        // "to be visible", "not to have value \"Ada\""...
	LastSeen string        // the element as last read, or what matched instead
	Tree     string        // the lines of the tree text around the element
	After    time.Duration // how long it waited
	// Err: aci.ErrTimeout, ErrStrict, ctx's error or the runtime's answer.
	Err error
}

func (e *ExpectError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "shinken: expected %s %s", e.Locator, e.Expected)
	if errors.Is(e.Err, ErrStrict) {
		b.WriteString(", but it names more than one element")
	} else if e.After > 0 {
		b.WriteString(" (waited " + seconds(e.After) + ")")
	}
	if e.Err != nil && !errors.Is(e.Err, aci.ErrTimeout) && !errors.Is(e.Err, ErrStrict) {
		b.WriteString(": " + e.Err.Error())
	}
	if e.LastSeen != "" {
		b.WriteString("\nlast seen: " + e.LastSeen)
	}
	if e.Tree != "" {
		b.WriteString("\ntree around it:\n" + e.Tree)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ExpectError) Unwrap() error { return e.Err }

// ToBeVisible waits until exactly one element matches and it is showing.
func (e *Expectation) ToBeVisible(ctx context.Context) error {
	return e.visible(ctx, true)
}

// ToBeHidden waits until none matches or the one matching is not showing.
func (e *Expectation) ToBeHidden(ctx context.Context) error {
	return e.visible(ctx, false)
}

func (e *Expectation) visible(ctx context.Context, want bool) error {
	if e.not {
		want = !want
	}
	what := "to be visible"
	if !want {
		what = "to be hidden"
	}
	return e.wait(ctx, false, what, func(f *found) (bool, string) {
		if len(f.matches) == 0 {
			return !want, "no element matches" + closest(f.all, f.l)
		}
		el := &f.matches[0]
		return f.visible(el) == want, seen(el)
	})
}

// ToBeEnabled waits until the element has the state "enabled" or
// "sensitive".
func (e *Expectation) ToBeEnabled(ctx context.Context) error {
	return e.on(ctx, "to be enabled", func(el *aci.Element) bool { return enabled(el) })
}

// ToBeChecked waits until the element has the state "checked".
func (e *Expectation) ToBeChecked(ctx context.Context) error {
	return e.ToHaveState(ctx, "checked")
}

// ToHaveState waits until state is among the element's states.
func (e *Expectation) ToHaveState(ctx context.Context, state string) error {
	what := "to have the state " + strconv.Quote(state)
	if state == "checked" {
		what = "to be checked"
	}
	return e.on(ctx, what, func(el *aci.Element) bool { return slices.Contains(el.States, state) })
}

// ToHaveValue waits until the element's value is value.
func (e *Expectation) ToHaveValue(ctx context.Context, value string) error {
	return e.on(ctx, "to have value "+strconv.Quote(value), func(el *aci.Element) bool { return el.Value == value })
}

// ToHaveText waits until the element's text (as Locator.Text reads it) is
// want, both trimmed and each run of white space read as one space, as
// Playwright's toHaveText: a web page's name is trimmed, its value not.
func (e *Expectation) ToHaveText(ctx context.Context, want string) error {
	want = normalizeSpace(want)
	return e.wait(ctx, false, "to have text "+strconv.Quote(want), func(f *found) (bool, string) {
		if len(f.matches) == 0 {
			return false, "no element matches" + closest(f.all, f.l)
		}
		el := &f.matches[0]
		got, err := e.l.c.textOf(ctx, el)
		if err != nil {
			return false, seen(el) + " (its text could not be read: " + err.Error() + ")"
		}
		s := seen(el)
		if got != el.Name {
			s += " text " + strconv.Quote(got)
		}
		return (normalizeSpace(got) == want) != e.not, s
	})
}

// normalizeSpace trims s and reads each run of white space in it as one
// space.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// ToHaveCount waits until the Locator matches n elements. It is not
// strict.
func (e *Expectation) ToHaveCount(ctx context.Context, n int) error {
	return e.wait(ctx, true, "to match "+strconv.Itoa(n)+" elements", func(f *found) (bool, string) {
		names := make([]string, 0, len(f.matches))
		for i := range f.matches {
			names = append(names, describeElement(&f.matches[i]))
		}
		s := strconv.Itoa(len(f.matches)) + " elements"
		if len(names) > 0 {
			s += ": " + strings.Join(names, "; ")
		}
		return (len(f.matches) == n) != e.not, s
	})
}

// on waits for a condition on one element; none matching meets neither
// the condition nor its Not form.
func (e *Expectation) on(ctx context.Context, what string, cond func(*aci.Element) bool) error {
	return e.wait(ctx, false, what, func(f *found) (bool, string) {
		if len(f.matches) == 0 {
			return false, "no element matches" + closest(f.all, f.l)
		}
		el := &f.matches[0]
		return cond(el) != e.not, seen(el)
	})
}

// wait waits until holds accepts a read of the Locator, strict
// unless many says several matches are fine, and returns an *ExpectError
// naming what (said in the positive) when the wait ends first.
func (e *Expectation) wait(ctx context.Context, many bool, what string, holds func(f *found) (bool, string)) error {
	if e.not {
		what = "not " + what
	}
	var last *found
	lastSeen := ""
	_, err := e.l.poll(ctx, "expect", func(f *found) verdict {
		last = f
		if !many && len(f.matches) > 1 {
			_, missing, err := f.one()
			lastSeen = missing
			return verdict{missing: missing, stop: err}
		}
		ok, s := holds(f)
		lastSeen = s
		return verdict{done: ok, missing: s}
	})
	if err == nil {
		return nil
	}
	xe := &ExpectError{Locator: e.l.String(), Expected: what, LastSeen: lastSeen, Err: err}
	var le *LocatorError
	if errors.As(err, &le) {
		xe.After, xe.Err = le.After, le.Err
		if lastSeen == "" {
			xe.LastSeen = le.Missing
		}
	}
	if last != nil {
		ref := ""
		if len(last.matches) > 0 {
			ref = last.matches[0].Ref
		}
		xe.Tree = treeAround(last.obs.TreeText, ref)
	}
	return xe
}

// seen describes an element as an expectation saw it.
func seen(e *aci.Element) string {
	s := describeElement(e)
	if len(e.States) > 0 {
		s += " [" + strings.Join(e.States, " ") + "]"
	}
	return s
}

// treeContext is how many lines treeAround shows each side of the
// element's, and at most when no element is named.
const treeContext = 6

// treeAround returns the lines of tree (a tree_text) around the line of
// the element ref, marked with "→"; its first lines when ref is "" or not
// in it.
func treeAround(tree, ref string) string {
	lines := strings.Split(strings.TrimRight(tree, "\n"), "\n")
	at := -1
	if ref != "" {
		for i, ln := range lines {
			if strings.HasPrefix(strings.TrimLeft(ln, " "), ref+" ") {
				at = i
				break
			}
		}
	}
	lo, hi := 0, min(len(lines), 2*treeContext+1)
	if at >= 0 {
		lo, hi = max(0, at-treeContext), min(len(lines), at+treeContext+1)
	}
	var b strings.Builder
	if lo > 0 {
		b.WriteString("  …\n")
	}
	for i := lo; i < hi; i++ {
		mark := "  "
		if i == at {
			mark = "→ "
		}
		b.WriteString(mark + lines[i] + "\n")
	}
	if hi < len(lines) {
		b.WriteString("  …\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
