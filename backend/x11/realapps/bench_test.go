package realapps

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// The benchmarks measure, side by side in one run, what the issue's
// targets compare: tree_text's size against Playwright's snapshot for
// models, observe's capture_ms (first and repeated) against a pyatspi walk
// of the same window, and a click by ref against a click at the same point.

// BenchmarkChromium runs the three comparisons on the form page, and times
// the observation that follows an action.
func BenchmarkChromium(b *testing.B) {
	d := newDesk(b)
	d.chromium("form.html")
	obs := d.observe("the form", formReady)
	b.Run("tree_bytes", func(b *testing.B) { benchTreeBytes(b, d) })
	b.Run("observe", func(b *testing.B) { benchObserve(b, d, obs) })
	b.Run("pyatspi", func(b *testing.B) { benchPyatspi(b, d, "Chromium", "Shinken form") })
	b.Run("click", func(b *testing.B) { benchClick(b, d, ref(obs, "push button", "Send")) })
	b.Run("observe_changed", func(b *testing.B) { benchObserveChanged(b, d, ref(obs, "check box", "Gift wrap")) })
}

// BenchmarkFirefox compares observe with pyatspi on the form page.
func BenchmarkFirefox(b *testing.B) {
	d := newDesk(b)
	d.firefox("form.html")
	obs := d.observe("the form", formReady)
	b.Run("observe", func(b *testing.B) { benchObserve(b, d, obs) })
	b.Run("pyatspi", func(b *testing.B) { benchPyatspi(b, d, "Firefox", "Shinken form") })
}

// BenchmarkGtk3Demo compares observe with pyatspi on gtk3-demo's window.
func BenchmarkGtk3Demo(b *testing.B) {
	d := newDesk(b)
	d.sess.Launch(b, "gtk3-demo")
	obs := d.observe("gtk3-demo", func(o *aci.Observation) bool {
		return strings.Contains(o.TreeText, `"Application Class"`) && len(o.Elements) > 150
	})
	b.Run("observe", func(b *testing.B) { benchObserve(b, d, obs) })
	b.Run("pyatspi", func(b *testing.B) { benchPyatspi(b, d, "gtk3-demo", "Application Class") })
}

// benchTreeBytes reports the size of the whole window's tree_text and of
// Playwright's ariaSnapshot({mode: "ai"}) of the same page, and checks
// that every interactive element has a line and a ref.
func benchTreeBytes(b *testing.B, d *desk) {
	core, err := filepath.Abs(filepath.Join("..", "..", "..", ".npm", "node_modules", "playwright-core"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(core); err != nil {
		atspitest.Missing(b, "playwright-core in .npm (scripts/test installs it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		atspitest.Missing(b, "node")
	}
	// Playwright starts a browser per snapshot: more than ctxT allows for
	// a few iterations.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var ours, theirs int
	for b.Loop() {
		obs, err := d.c.Observe(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		checkInteractiveLines(b, obs)
		ours = len(obs.TreeText)
		out, err := exec.CommandContext(ctx, node, testdata(b, "aria_snapshot.js"), core,
			"file://"+testdata(b, "form.html")).Output()
		if err != nil {
			b.Fatalf("playwright: %v", err)
		}
		theirs = len(out)
	}
	b.ReportMetric(float64(ours), "tree-bytes")
	b.ReportMetric(float64(theirs), "playwright-bytes")
	b.ReportMetric(float64(ours)/float64(theirs), "ratio")
}

// benchObserve reports the first observation's capture_ms and the mean of
// the repeated ones, taken once the application has been quiet (no
// accessibility event) for a second: what an agent's next look costs when
// nothing changed. The pyatspi walk it is compared with runs after it, on
// the same quiet application.
func benchObserve(b *testing.B, d *desk, first *aci.Observation) {
	ctx := ctxT(b)
	if _, err := d.c.Observe(ctx, &client.ObserveRequest{Settle: time.Second}); err != nil {
		b.Fatal(err)
	}
	var total float64
	n := 0
	for b.Loop() {
		obs, err := d.c.Observe(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += *obs.CaptureMS
		n++
	}
	b.ReportMetric(*d.firstMS, "first-ms")
	b.ReportMetric(total/float64(n), "repeat-ms")
	b.ReportMetric(float64(len(first.Elements)), "nodes")
}

// benchObserveChanged toggles a check box by ref, then observes, and
// reports the observation's capture_ms: what the look after an action
// costs, when the application's events name what changed.
func benchObserveChanged(b *testing.B, d *desk, ref string) {
	ctx := ctxT(b)
	var total float64
	checked := false
	for b.Loop() {
		if err := d.c.Click(ctx, aci.Ref(ref)); err != nil {
			b.Fatal(err)
		}
		checked = !checked
		obs, err := d.c.Observe(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if e := element(obs, ref); e == nil || hasState(e, "checked") != checked {
			b.Fatalf("the observation after the click does not show the check box checked=%v", checked)
		}
		total += *obs.CaptureMS
	}
	b.ReportMetric(total/float64(b.N), "observe-ms")
}

// benchPyatspi runs the pyatspi baseline walk of the window b.N times in
// one process, after a warm-up walk, and reports their mean.
func benchPyatspi(b *testing.B, d *desk, app, window string) {
	python := atspitest.Python(b, "pyatspi")
	script, err := filepath.Abs(filepath.Join("..", "atspi", "testdata", "pyatspi_walk.py"))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := d.sess.Command(ctx, python, script, app, window, strconv.Itoa(b.N+1)).Output()
	if err != nil {
		b.Fatalf("pyatspi walk: %v", err)
	}
	var total float64
	nodes, walks := 0, 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var n int
		var ms float64
		if _, err := fmt.Sscan(sc.Text(), &n, &ms); err != nil {
			b.Fatalf("pyatspi walk printed %q", sc.Text())
		}
		if walks > 0 {
			total += ms
		}
		walks++
		nodes = n
	}
	if walks < 2 {
		b.Fatalf("pyatspi walk printed %q", out)
	}
	b.ReportMetric(total/float64(walks-1), "walk-ms")
	b.ReportMetric(float64(nodes), "nodes")
}

// benchClick clicks the element ref by ref and then at the point the ref
// resolved to, alternately, and reports the mean of each and their
// difference: what resolving the ref costs beyond the click itself.
func benchClick(b *testing.B, d *desk, ref string) {
	ctx := ctxT(b)
	obs, err := d.c.Observe(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	e := element(obs, ref)
	if e == nil {
		b.Fatalf("no %s", ref)
	}
	x, y := e.BBox[0]+e.BBox[2]/2, e.BBox[1]+e.BBox[3]/2
	var byRef, byPoint time.Duration
	for b.Loop() {
		start := time.Now()
		if err := d.c.Click(ctx, aci.Ref(ref)); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := d.c.Click(ctx, aci.Px(x, y)); err != nil {
			b.Fatal(err)
		}
		byRef += mid.Sub(start)
		byPoint += time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(byRef.Microseconds())/1000/n, "ref-ms")
	b.ReportMetric(float64(byPoint.Microseconds())/1000/n, "point-ms")
	b.ReportMetric(float64((byRef-byPoint).Microseconds())/1000/n, "extra-ms")
}
