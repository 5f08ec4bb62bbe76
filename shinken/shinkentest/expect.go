package shinkentest

import (
	"testing"

	"shinken.dev/go/shinken/client"
)

// An Assertion is [client.Expectation] for a test: each To method waits
// until its condition holds, as the client's does, and fails the test with
// t.Fatal when it does not in time (the message: what was expected, what
// was last seen, and the tree around the element). Call it from the test's
// goroutine. It waits within t.Context().
type Assertion struct {
	t testing.TB
	e *client.Expectation
}

// Expect returns the assertions on l:
//
//	shinkentest.Expect(t, c.ByRole("label", "Saved.")).ToBeVisible()
//	shinkentest.Expect(t, c.ByRole("check box", "Subscribe")).Not().ToBeChecked()
//
// Each waits at most l's timeout (client.DefaultLocatorTimeout unless
// Locator.WithTimeout says otherwise).
func Expect(t testing.TB, l *client.Locator) *Assertion {
	return &Assertion{t: t, e: l.Expect()}
}

// Not returns the opposite assertions.
func (a *Assertion) Not() *Assertion { return &Assertion{t: a.t, e: a.e.Not()} }

func (a *Assertion) check(err error) {
	a.t.Helper()
	if err != nil {
		a.t.Fatal(err)
	}
}

// ToBeVisible fails the test unless exactly one element matches and it is
// showing, in time.
func (a *Assertion) ToBeVisible() { a.t.Helper(); a.check(a.e.ToBeVisible(a.t.Context())) }

// ToBeHidden fails the test unless no element matches, or the one that
// does is not showing, in time.
func (a *Assertion) ToBeHidden() { a.t.Helper(); a.check(a.e.ToBeHidden(a.t.Context())) }

// ToBeEnabled fails the test unless the element is enabled in time.
func (a *Assertion) ToBeEnabled() { a.t.Helper(); a.check(a.e.ToBeEnabled(a.t.Context())) }

// ToBeChecked fails the test unless the element is checked in time.
func (a *Assertion) ToBeChecked() { a.t.Helper(); a.check(a.e.ToBeChecked(a.t.Context())) }

// ToHaveValue fails the test unless the element's value is value in time.
func (a *Assertion) ToHaveValue(value string) {
	a.t.Helper()
	a.check(a.e.ToHaveValue(a.t.Context(), value))
}

// ToHaveText fails the test unless the element's text (its name) is text
// in time.
func (a *Assertion) ToHaveText(text string) {
	a.t.Helper()
	a.check(a.e.ToHaveText(a.t.Context(), text))
}

// ToHaveCount fails the test unless the locator matches n elements in
// time.
func (a *Assertion) ToHaveCount(n int) {
	a.t.Helper()
	a.check(a.e.ToHaveCount(a.t.Context(), n))
}

// ToHaveState fails the test unless state is among the element's states in
// time.
func (a *Assertion) ToHaveState(state string) {
	a.t.Helper()
	a.check(a.e.ToHaveState(a.t.Context(), state))
}

// Must fails the test with err unless it is nil: one line for each step
// of a test that acts through locators,
//
//	shinkentest.Must(t, c.ByRole("push button", "Submit").Click(t.Context()))
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
