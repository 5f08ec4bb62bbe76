//go:build unix

package toolset_test

import (
	"context"
	"encoding/json"
	"image"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/toolset"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAnthropicTurnRatio alternates, in one loop, an Anthropic turn of
// left_click + screenshot through the toolset and the same two ACI calls
// made directly (a click at the mapped point, a PNG screenshot at the
// model's size), on a 1920×1080 headless desktop over loopback. Each click
// toggles the form's check box, so every screenshot is encoded afresh (the
// frame cache is off). It reports the ratio of the medians, of the means,
// and of the CPU time.
func BenchmarkAnthropicTurnRatio(b *testing.B) {
	ctx := context.Background()
	desk := headless.New(&headless.Options{Width: 1920, Height: 1080})
	desk.Launch(ctx, "notes", nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "t"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	c, err := shinken.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &shinken.DialOptions{Token: "t", NoFrameCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	a, err := toolset.NewAnthropic(ctx, c, nil)
	if err != nil {
		b.Fatal(err)
	}
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	var box image.Rectangle
	for _, el := range obs.Elements {
		if el.Role == "check box" {
			box = image.Rect(int(el.BBox[0]), int(el.BBox[1]), int(el.BBox[0]+el.BBox[2]), int(el.BBox[1]+el.BBox[3]))
		}
	}
	sc := a.Scale()
	m := sc.ToModel(box.Min.Add(box.Max).Div(2))
	p, err := sc.ToScreen(m)
	if err != nil {
		b.Fatal(err)
	}
	coord, _ := json.Marshal(map[string]any{"coordinate": []int{m.X, m.Y}})
	uses := []toolset.ToolUse{
		{ID: "1", Name: "left_click", ToolsetName: "computer", Input: coord},
		{ID: "2", Name: "screenshot", ToolsetName: "computer", Input: json.RawMessage(`{}`)},
	}
	click := &shinken.Action{Verb: shinken.VerbClick, Target: shinken.Px(float64(p.X), float64(p.Y))}
	shot := &shinken.ScreenshotRequest{Format: shinken.FormatPNG, MaxLongEdge: max(sc.Image.X, sc.Image.Y)}

	var direct, turn []time.Duration
	var directCPU, turnCPU time.Duration
	for b.Loop() {
		s, cpu := time.Now(), cpuTime()
		if _, err := c.Do(ctx, click); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Screenshot(ctx, shot); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(s))
		directCPU += cpuTime() - cpu

		s, cpu = time.Now(), cpuTime()
		res, err := a.Turn(ctx, uses)
		if err != nil || res[1].Content[0].Source == nil {
			b.Fatal(err)
		}
		turn = append(turn, time.Since(s))
		turnCPU += cpuTime() - cpu
	}
	var sumDirect, sumTurn time.Duration
	for i := range direct {
		sumDirect += direct[i]
		sumTurn += turn[i]
	}
	slices.Sort(direct)
	slices.Sort(turn)
	md, mt := direct[len(direct)/2], turn[len(turn)/2]
	b.ReportMetric(float64(md.Microseconds())/1000, "direct-ms")
	b.ReportMetric(float64(mt.Microseconds())/1000, "toolset-ms")
	b.ReportMetric(float64(mt)/float64(md), "ratio")
	b.ReportMetric(float64(sumTurn)/float64(sumDirect), "mean-ratio")
	b.ReportMetric(float64(turnCPU)/float64(directCPU), "cpu-ratio")
}
