package shinkentest

import (
	"testing"

	"shinken.dev/go/shinken/client"
)

// An Assertion is [client.Expectation] for a test: each To method waits as
// the client's does, within t.Context(), and fails the test with t.Fatal if
// it fails. Call it from the test's goroutine.
type Assertion struct {
	t testing.TB
	e *client.Expectation
}

// Expect returns the assertions on l:
//
//	shinkentest.Expect(t, c.ByRole("label", "Saved.")).ToBeVisible()
//	shinkentest.Expect(t, c.ByRole("check box", "Subscribe")).Not().ToBeChecked()
//
// Each waits at most l's timeout ([client.Locator.WithTimeout]).
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

// ToBeVisible is [client.Expectation.ToBeVisible], failing the test.
func (a *Assertion) ToBeVisible() { a.t.Helper(); a.check(a.e.ToBeVisible(a.t.Context())) }

// ToBeHidden is [client.Expectation.ToBeHidden], failing the test.
func (a *Assertion) ToBeHidden() { a.t.Helper(); a.check(a.e.ToBeHidden(a.t.Context())) }

// ToBeEnabled is [client.Expectation.ToBeEnabled], failing the test.
func (a *Assertion) ToBeEnabled() { a.t.Helper(); a.check(a.e.ToBeEnabled(a.t.Context())) }

// ToBeChecked is [client.Expectation.ToBeChecked], failing the test.
func (a *Assertion) ToBeChecked() { a.t.Helper(); a.check(a.e.ToBeChecked(a.t.Context())) }

// ToHaveValue is [client.Expectation.ToHaveValue], failing the test.
func (a *Assertion) ToHaveValue(value string) {
	a.t.Helper()
	a.check(a.e.ToHaveValue(a.t.Context(), value))
}

// ToHaveText is [client.Expectation.ToHaveText], failing the test.
func (a *Assertion) ToHaveText(text string) {
	a.t.Helper()
	a.check(a.e.ToHaveText(a.t.Context(), text))
}

// ToHaveCount is [client.Expectation.ToHaveCount], failing the test.
func (a *Assertion) ToHaveCount(n int) {
	a.t.Helper()
	a.check(a.e.ToHaveCount(a.t.Context(), n))
}

// ToHaveState is [client.Expectation.ToHaveState], failing the test.
func (a *Assertion) ToHaveState(state string) {
	a.t.Helper()
	a.check(a.e.ToHaveState(a.t.Context(), state))
}

// Must fails the test with err unless it is nil: one line per step,
//
//	shinkentest.Must(t, c.ByRole("push button", "Submit").Click(t.Context()))
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
