package shinken_test

import (
	"context"
	"fmt"
	"image"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/imaging"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// benchEnv serves a 1920×1080 headless desktop with notes and form open,
// on loopback, without the validating proxy (it would be measured too).
func benchEnv(b *testing.B, opts *client.DialOptions, rtOpts ...func(*shinken.RuntimeOptions)) (*client.Client, *headless.Desktop, *shinken.Runtime) {
	b.Helper()
	desk := headless.New(&headless.Options{Width: 1920, Height: 1080})
	ctx := context.Background()
	desk.Launch(ctx, "notes", nil)
	desk.Launch(ctx, "form", nil)
	ro := &shinken.RuntimeOptions{Token: testToken, Executor: osexec.New(nil), Logger: slog.New(slog.DiscardHandler)}
	for _, f := range rtOpts {
		f(ro)
	}
	rt := shinken.NewRuntime(desk, ro)
	srv := httptest.NewServer(rt)
	o := client.DialOptions{}
	if opts != nil {
		o = *opts
	}
	o.Token = testToken
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		rt.Close()
		srv.Close()
	})
	return c, desk, rt
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
}

// BenchmarkCaptureEncode is the floor a screenshot is compared with:
// capture plus PNG encode, in process, nothing else.
func BenchmarkCaptureEncode(b *testing.B) {
	desk := headless.New(&headless.Options{Width: 1920, Height: 1080})
	ctx := context.Background()
	desk.Launch(ctx, "notes", nil)
	desk.Launch(ctx, "form", nil)
	var buf []byte
	start := cpuTime()
	for b.Loop() {
		f, err := desk.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = imaging.EncodePNG(buf[:0], f.Image); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(len(buf)), "png-bytes")
}

// BenchmarkScreenshot is a full PNG screenshot over loopback, from the
// request to the image bytes in the client (cache off, so every request
// encodes), in binary and in text framing.
func BenchmarkScreenshot(b *testing.B) {
	for _, text := range []bool{false, true} {
		b.Run(map[bool]string{false: "binary", true: "text"}[text], func(b *testing.B) {
			c, _, _ := benchEnv(b, &client.DialOptions{TextFrames: text, NoFrameCache: true})
			ctx := context.Background()
			var n int
			start := cpuTime()
			for b.Loop() {
				s, err := c.Screenshot(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				n = len(s.Data)
			}
			reportCPU(b, start)
			b.ReportMetric(float64(n), "png-bytes")
		})
	}
}

// BenchmarkScreenshotDecoded adds the client's PNG decode to the round trip.
func BenchmarkScreenshotDecoded(b *testing.B) {
	c, _, _ := benchEnv(b, &client.DialOptions{NoFrameCache: true})
	ctx := context.Background()
	for b.Loop() {
		s, err := c.Screenshot(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Image(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScreenshotNotModified is a screenshot answered not_modified, with
// the number of encodes per op reported (it must be 0).
func BenchmarkScreenshotNotModified(b *testing.B) {
	c, _, rt := benchEnv(b, nil)
	ctx := context.Background()
	if _, err := c.Screenshot(ctx, nil); err != nil {
		b.Fatal(err)
	}
	before := shinken.Encodes(rt)
	for b.Loop() {
		s, err := c.Screenshot(ctx, nil)
		if err != nil || !s.Cached {
			b.Fatal("not cached", err)
		}
	}
	b.ReportMetric(float64(shinken.Encodes(rt)-before)/float64(b.N), "encodes/op")
}

// BenchmarkCaptureHash is capture plus frame hash, the floor for
// not_modified.
func BenchmarkCaptureHash(b *testing.B) {
	desk := headless.New(&headless.Options{Width: 1920, Height: 1080})
	ctx := context.Background()
	desk.Launch(ctx, "notes", nil)
	for b.Loop() {
		f, _ := desk.Capture(ctx, aci.ScopeScreen)
		imaging.FrameHash(f.Image)
	}
}

// BenchmarkClickAck is a click's round trip over loopback; it reports the
// median and 99th percentile.
func BenchmarkClickAck(b *testing.B) {
	c, _, _ := benchEnv(b, nil)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	t := aci.Px(5, 1075)
	for b.Loop() {
		s := time.Now()
		if err := c.Click(ctx, t); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(s))
	}
	reportQuantiles(b, lat)
}

func reportQuantiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkExecTrue is a buffered `true`, spawn included, over loopback.
func BenchmarkExecTrue(b *testing.B) {
	c, _, _ := benchEnv(b, nil)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	a := &aci.ExecRequest{Argv: []string{"true"}}
	for b.Loop() {
		s := time.Now()
		if _, err := c.Exec(ctx, a); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(s))
	}
	reportQuantiles(b, lat)
}

// BenchmarkExecStream streams `head -c 500M /dev/zero` to the client.
func BenchmarkExecStream(b *testing.B) {
	for _, text := range []bool{false, true} {
		b.Run(map[bool]string{false: "binary", true: "text"}[text], func(b *testing.B) {
			c, _, _ := benchEnv(b, &client.DialOptions{TextFrames: text}, func(o *shinken.RuntimeOptions) {
				o.Exec.StreamBudget = 1 << 40
			})
			ctx := context.Background()
			size := 500 << 20
			if text {
				size = 100 << 20
			}
			b.SetBytes(int64(size))
			for b.Loop() {
				st, err := c.ExecStream(ctx, &aci.ExecRequest{Argv: []string{"head", "-c", fmt.Sprint(size), "/dev/zero"}})
				if err != nil {
					b.Fatal(err)
				}
				total, err := streamedBytes(ctx, st)
				if err != nil {
					b.Fatal(err)
				}
				if x := st.Exit(); x.Truncated {
					b.Logf("truncated at %d bytes: raise StreamBudget", total)
				}
			}
		})
	}
}

// BenchmarkScreencastTyping runs a 10 fps delta screencast of a 1920×1080
// desktop while text is typed into a field, and reports CPU per second of
// stream and the bytes of delta frames against keyframes.
func BenchmarkScreencastTyping(b *testing.B) {
	c, desk, _ := benchEnv(b, nil)
	ctx := context.Background()
	tree, _ := desk.Snapshot(ctx, shinken.SnapshotOptions{})
	for _, n := range tree.Nodes {
		if n.Role == "text" {
			desk.Perform(ctx, n.ID, shinken.ElementAction{Op: shinken.OpInvoke})
			c.Click(ctx, aci.Px(float64(n.BBox.Min.X+5), float64(n.BBox.Min.Y+5)))
			break
		}
	}
	sc, err := c.Screencast(ctx, &client.ScreencastRequest{FPS: 10, Delta: true})
	if err != nil {
		b.Fatal(err)
	}
	key, err := sc.Next(ctx)
	if err != nil {
		b.Fatal(err)
	}
	start := cpuTime()
	wall := time.Now()
	var tiles, bytes, deltas int
	for i := 0; b.Loop(); i++ {
		// One character per frame interval, as a fast typist.
		desk.Type(ctx, string(rune('a'+i%26)))
		f, err := sc.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		tiles += f.Tiles
		if !f.Keyframe {
			bytes += f.Bytes
			deltas++
		}
	}
	elapsed := time.Since(wall)
	b.ReportMetric(float64(cpuTime()-start)/float64(elapsed)*100, "cpu-%")
	b.ReportMetric(float64(tiles)/float64(b.N), "tiles/frame")
	b.ReportMetric(float64(key.Bytes), "keyframe-bytes")
	if deltas > 0 {
		b.ReportMetric(float64(bytes)/float64(deltas), "delta-bytes")
		b.ReportMetric(float64(bytes)/float64(deltas)/float64(key.Bytes)*100, "delta/key-%")
	}
	sc.Stop(ctx)
}

// BenchmarkRenderTree renders a 2,000-node tree in full, and as a diff with
// five changes, and reports the sizes.
func BenchmarkRenderTree(b *testing.B) {
	fa := &fakeA11y{nodes: bigTree(2000)}
	b.Run("full", func(b *testing.B) {
		o := shinken.NewObserver(fa)
		ctx := context.Background()
		var size int
		for b.Loop() {
			obs, err := o.Observe(ctx, shinken.ObserveOptions{})
			if err != nil {
				b.Fatal(err)
			}
			size = len(obs.TreeText)
		}
		b.ReportMetric(float64(size), "bytes")
		b.ReportMetric(float64(size)/4, "tokens")
	})
	b.Run("diff5", func(b *testing.B) {
		o := shinken.NewObserver(fa)
		ctx := context.Background()
		o.Observe(ctx, shinken.ObserveOptions{})
		var size int
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			fa.mu.Lock()
			for k := range 5 {
				fa.nodes[1+(i*5+k)*37%1999].Value = fmt.Sprint("v", i, k)
			}
			fa.mu.Unlock()
			b.StartTimer()
			obs, err := o.Observe(ctx, shinken.ObserveOptions{Diff: true})
			if err != nil || obs.Tree != "diff" {
				b.Fatal("no diff", err)
			}
			size = len(obs.TreeText)
		}
		b.ReportMetric(float64(size), "bytes")
	})
}

func bigTree(n int) []shinken.Node {
	nodes := []shinken.Node{{ID: "root", Parent: -1, Role: "frame", Name: "Big", States: []string{"enabled", "showing", "visible", "active"}, BBox: image.Rect(0, 0, 1920, 1080)}}
	for i := 1; i < n; i++ {
		parent, depth := 0, 1
		role := "list item"
		if i%50 == 1 {
			role = "list"
		} else {
			parent = i - (i-1)%50
			depth = 2
		}
		nodes = append(nodes, shinken.Node{
			ID: fmt.Sprint("n", i), Parent: parent, Depth: depth, Role: role, Name: fmt.Sprintf("Row %d of the list", i),
			States: []string{"enabled", "sensitive", "showing", "visible", "selectable"}, Actions: []string{"activate"},
			BBox: image.Rect(0, i*20, 400, i*20+20),
		})
	}
	return nodes
}

// BenchmarkScreenshotRatio alternates, in one loop, the floor (capture +
// PNG encode in process) and a full screenshot over loopback (binary
// frames, cache off), so both see the same machine load, and reports the
// ratio of their medians, of their means, and of the CPU time each took.
func BenchmarkScreenshotRatio(b *testing.B) {
	c, desk, _ := benchEnv(b, &client.DialOptions{NoFrameCache: true})
	ctx := context.Background()
	var buf []byte
	var floor, full []time.Duration
	var floorCPU, fullCPU time.Duration
	for b.Loop() {
		s, cpu := time.Now(), cpuTime()
		f, err := desk.Capture(ctx, aci.ScopeScreen)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = imaging.EncodePNG(buf[:0], f.Image); err != nil {
			b.Fatal(err)
		}
		floor = append(floor, time.Since(s))
		floorCPU += cpuTime() - cpu
		s, cpu = time.Now(), cpuTime()
		if _, err := c.Screenshot(ctx, nil); err != nil {
			b.Fatal(err)
		}
		full = append(full, time.Since(s))
		fullCPU += cpuTime() - cpu
	}
	var sumFloor, sumFull time.Duration
	for i := range floor {
		sumFloor += floor[i]
		sumFull += full[i]
	}
	slices.Sort(floor)
	slices.Sort(full)
	mf, ms := floor[len(floor)/2], full[len(full)/2]
	b.ReportMetric(float64(mf.Microseconds())/1000, "floor-ms")
	b.ReportMetric(float64(ms.Microseconds())/1000, "screenshot-ms")
	b.ReportMetric(float64(ms)/float64(mf), "ratio")
	b.ReportMetric(float64(sumFull)/float64(sumFloor), "mean-ratio")
	b.ReportMetric(float64(fullCPU)/float64(floorCPU), "cpu-ratio")
}

// BenchmarkReadTimeoutRatio measures what following the client's frames
// (RuntimeOptions.ReadTimeout) costs, side by side in one loop: each
// iteration times a ping round trip and a 1 MiB clipboard_set on a runtime
// with the read timeout (the default) and on one without (negative), and
// the benchmark reports the medians and their ratios.
func BenchmarkReadTimeoutRatio(b *testing.B) {
	on, _, _ := benchEnv(b, nil)
	off, _, _ := benchEnv(b, nil, func(o *shinken.RuntimeOptions) { o.ReadTimeout = -1 })
	ctx := context.Background()
	text := strings.Repeat("x", 1<<20)
	var pingOn, pingOff, setOn, setOff []time.Duration
	timed := func(into *[]time.Duration, f func() error) {
		s := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(s))
	}
	// Each iteration swaps which runtime goes first, so that neither
	// always follows the other's 1 MiB.
	i := 0
	for b.Loop() {
		first, second := on, off
		fp, sp, fs, ss := &pingOn, &pingOff, &setOn, &setOff
		if i%2 == 1 {
			first, second = off, on
			fp, sp, fs, ss = &pingOff, &pingOn, &setOff, &setOn
		}
		i++
		timed(fp, func() error { return first.Ping(ctx) })
		timed(sp, func() error { return second.Ping(ctx) })
		timed(fs, func() error { return first.ClipboardSet(ctx, text) })
		timed(ss, func() error { return second.ClipboardSet(ctx, text) })
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	b.ReportMetric(med(pingOn), "ping-on-µs")
	b.ReportMetric(med(pingOff), "ping-off-µs")
	b.ReportMetric(med(pingOn)/med(pingOff), "ping-ratio")
	b.ReportMetric(med(setOn), "set1MiB-on-µs")
	b.ReportMetric(med(setOff), "set1MiB-off-µs")
	b.ReportMetric(med(setOn)/med(setOff), "set1MiB-ratio")
}
