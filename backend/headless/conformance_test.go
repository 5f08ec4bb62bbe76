package headless_test

import (
	"strconv"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/shinkentest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counterApp is the conformance suite's fixture application: a button, an
// entry, and a label counting the button's activations.
func counterApp(w *headless.Window) {
	w.SetTitle("Shinken test")
	n := 0
	var count *headless.Label
	w.AddButton("Count", func() {
		n++
		count.SetText(strconv.Itoa(n))
	})
	w.AddEntry("Text")
	count = w.AddLabel("0")
}

func TestConformance(t *testing.T) {
	// Every message of the Wire cases and of Settled is checked against
	// the schema on its way.
	var proxied atomic.Int64
	proxy := func(t testing.TB, url string) string {
		proxied.Add(1)
		return schematest.ProxyURL(t, url)
	}
	shinkentest.RunWith(t, func(t *testing.T) shinken.Backend {
		d := headless.New(nil)
		d.Register(shinkentest.FixtureApp, counterApp)
		return d
	}, &shinkentest.Options{Proxy: proxy})
	if proxied.Load() == 0 {
		t.Error("the suite dialled no runtime through Options.Proxy")
	}
}

// TestConformanceHiDPI runs the suite on a small screen at twice the
// density, where every metric differs from the default desktop.
func TestConformanceHiDPI(t *testing.T) {
	shinkentest.RunWith(t, func(t *testing.T) shinken.Backend {
		d := headless.New(&headless.Options{Width: 1000, Height: 900, DPR: 2})
		d.Register(shinkentest.FixtureApp, counterApp)
		return d
	}, &shinkentest.Options{Proxy: schematest.ProxyURL})
}
