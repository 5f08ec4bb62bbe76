package escouade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/plugin/plugintest"
	"shinken.dev/go/escouade/protocol"
)

func benchHost(b *testing.B) *escouade.Host {
	b.Helper()
	h := escouade.New(&escouade.Options{
		Journal:  slog.DiscardHandler,
		Secrets:  escouade.SecretMap{},
		Projects: escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}},
	})
	b.Cleanup(func() { h.Close(context.Background()) })
	return h
}

var benchRequest = protocol.PermissionRequest{ID: "r", Kind: "command", Tool: "exec", Input: map[string]any{"argv": []string{"ls"}}}

// startBenchPlugins starts n plugins that allow everything, as processes of
// this test binary or in-process.
func startBenchPlugins(b *testing.B, h *escouade.Host, n int, process bool) {
	b.Helper()
	for i := range n {
		id := fmt.Sprintf("bench%d", i)
		if process {
			dir := writePlugin(b, id, commandManifest("bench")+`,"permissions":{"decide":true}`, nil)
			if _, err := h.Start(context.Background(), dir); err != nil {
				b.Fatal(err)
			}
			continue
		}
		m := parseManifest(b, id, `,"permissions":{"decide":true}`)
		if _, err := plugintest.Connect(context.Background(), h, m, "", plugin.Handlers{
			Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
				return protocol.Decision{Verdict: protocol.Allow}, nil
			},
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// reportLatency reports the median and the 99th percentile of ds.
func reportLatency(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// benchDecide times Decide, one call at a time, with n plugins that allow
// everything, and reports its latency.
func benchDecide(b *testing.B, n int, process bool) {
	h := benchHost(b)
	startBenchPlugins(b, h, n, process)
	ctx := context.Background()
	about := escouade.About{Project: "p"}
	for range 100 { // warm up both sides
		h.Decide(ctx, benchRequest, about)
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		d, err := h.Decide(ctx, benchRequest, about)
		ds = append(ds, time.Since(start))
		if err != nil || d.Verdict != protocol.Allow {
			b.Fatal(d, err)
		}
	}
	b.StopTimer()
	reportLatency(b, ds)
}

// BenchmarkRoundTrip is one request from the Host to a Go plugin process
// and its answer back: permissions/decide with one plugin. Side by side,
// the same exchange between a host and a plugin written the plain way, an
// encoding/json Encoder and Decoder on each side of the same pipes.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("escouade", func(b *testing.B) { benchDecide(b, 1, true) })
	b.Run("encoding-json", func(b *testing.B) {
		exe, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(exe, pluginArg, "naive")
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			in.Close()
			cmd.Wait()
		})
		enc, dec := json.NewEncoder(in), json.NewDecoder(out)
		call := func(id int) time.Duration {
			start := time.Now()
			err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": "permissions/decide",
				"params": map[string]any{"request": benchRequest, "project": protocol.Project{ID: "p", Name: "P"}}})
			var resp struct {
				ID     int `json:"id"`
				Result struct {
					Decision string `json:"decision"`
				} `json:"result"`
			}
			if err == nil {
				err = dec.Decode(&resp)
			}
			d := time.Since(start)
			if err != nil || resp.ID != id || resp.Result.Decision != "allow" {
				b.Fatal(resp, err)
			}
			return d
		}
		for i := range 100 {
			call(i)
		}
		ds := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			ds = append(ds, call(i))
		}
		b.StopTimer()
		reportLatency(b, ds)
	})
}

// BenchmarkPipelined is the throughput of many requests in flight to one Go
// plugin process: each call is two messages, the request and its answer.
func BenchmarkPipelined(b *testing.B) {
	h := benchHost(b)
	startBenchPlugins(b, h, 1, true)
	ctx := context.Background()
	about := escouade.About{Project: "p"}
	b.SetParallelism(16) // 32 in flight: within the plugin's 64 workers
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if d, err := h.Decide(ctx, benchRequest, about); err != nil || d.Verdict != protocol.Allow {
				b.Error(d, err)
				return
			}
		}
	})
	b.StopTimer()
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/secs, "calls/s")
	b.ReportMetric(float64(2*b.N)/secs, "msgs/s")
}

// BenchmarkFactsFanOut publishes facts to 10 in-process Go plugins, and
// counts a fact once every plugin has received it.
func BenchmarkFactsFanOut(b *testing.B) {
	const plugins = 10
	h := benchHost(b)
	var counts [plugins]atomic.Int64
	progress := make(chan struct{}, 1)
	for i := range plugins {
		m := parseManifest(b, fmt.Sprintf("sink%d", i), `,"permissions":{"events":["agent.status"]}`)
		if _, err := plugintest.Connect(context.Background(), h, m, "", plugin.Handlers{
			Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) {
				if counts[i].Add(1)%128 == 0 {
					select {
					case progress <- struct{}{}:
					default:
					}
				}
			},
		}); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	about := escouade.About{Project: "p", Agent: &protocol.Agent{ID: "a1", Name: "Ada"}}
	data := map[string]string{"status": "working", "was": "idle"}
	slowest := func() int64 {
		low := counts[0].Load()
		for i := range counts {
			low = min(low, counts[i].Load())
		}
		return low
	}
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		if _, err := h.Fact(ctx, "agent.status", data, about); err != nil {
			b.Fatal(err)
		}
		// Keep within what a plugin holds waiting (package plugin drops
		// facts past 4096 queued): the figure is what they all take in,
		// sustained.
		for i%256 == 255 && int64(i)-slowest() > 2048 {
			<-progress
		}
	}
	for slowest() < int64(b.N) {
		select {
		case <-progress:
		case <-time.After(time.Millisecond): // the last few, past the last signal
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "facts/s")
}

// BenchmarkDecideOverhead is what Decide costs beyond the plugins' own time:
// four plugins that answer at once, in-process and as processes.
func BenchmarkDecideOverhead(b *testing.B) {
	for _, process := range []bool{false, true} {
		name := "in-process"
		if process {
			name = "processes"
		}
		b.Run(name, func(b *testing.B) { benchDecide(b, 4, process) })
	}
}
