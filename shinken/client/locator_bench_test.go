package client_test

import (
	"testing"
	"time"

	"shinken.dev/go/shinken/aci"
)

// BenchmarkLocatorClick clicks the form's Submit button by a locator and by
// the ref the caller already holds, alternately, and reports the mean of
// each and their ratio: what finding the element anew, and waiting until it
// is actionable (two reads of the tree), costs beside the click.
func BenchmarkLocatorClick(b *testing.B) {
	c := locRig(b, launched(b, "form"), nil)
	ctx := b.Context()
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	submit, err := obs.Find("push button", "Submit")
	if err != nil {
		b.Fatal(err)
	}
	loc := c.ByRole("push button", "Submit")
	var byRef, byLocator time.Duration
	for b.Loop() {
		start := time.Now()
		if err := c.Click(ctx, aci.Ref(submit.Ref)); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := loc.Click(ctx); err != nil {
			b.Fatal(err)
		}
		byRef += mid.Sub(start)
		byLocator += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(byRef.Microseconds())/1000/n, "ref-ms")
	b.ReportMetric(float64(byLocator.Microseconds())/1000/n, "locator-ms")
	b.ReportMetric(float64(byLocator)/float64(byRef), "locator/ref")
}
