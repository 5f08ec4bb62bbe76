package realapps

import (
	"testing"
	"time"

	"shinken.dev/go/shinken/aci"
)

// BenchmarkLocatorClick clicks zenity's Email field by a locator and by
// the ref the caller already holds, alternately, and reports the mean of
// each and their ratio: what finding the element anew and waiting until
// it is actionable (two reads of the tree) cost beside the click itself.
func BenchmarkLocatorClick(b *testing.B) {
	d := newDesk(b)
	d.sess.Launch(b, "zenity", "--forms", "--title=Order", "--text=Your order", "--add-entry=Name", "--add-entry=Email")
	obs := d.observe("the zenity form", func(o *aci.Observation) bool { return ref(o, "text", "Email") != "" })
	held := aci.Ref(ref(obs, "text", "Email"))
	loc := d.by("text", "Email")
	ctx := b.Context()
	var byRef, byLocator time.Duration
	for b.Loop() {
		start := time.Now()
		if err := d.c.Click(ctx, held); err != nil {
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
