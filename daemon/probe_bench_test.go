package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// BenchmarkProbesUnderLoad runs N agents, each looping a screenshot, an
// observe and a click on a headless desktop, while a prober GETs /readyz
// and /healthz in turn as fast as they answer: it reports the probes'
// p50 and p99 beside one agent iteration's (the reference: what the load
// itself costs), at N = 1, 10, 50 and 200 in one run. b.N counts probes.
func BenchmarkProbesUnderLoad(b *testing.B) {
	for _, n := range []int{1, 10, 50, 200} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			d := startDaemon(b, &Options{Token: "tok", DrainTimeout: time.Second})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			var iters []time.Duration
			ready := make(chan struct{}, n)
			for range n {
				c, err := client.Dial(ctx, d.Endpoints()[0].ACI, &client.DialOptions{Token: "tok"})
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer c.Close()
					first := true
					for ctx.Err() == nil {
						t0 := time.Now()
						if _, err := c.Screenshot(ctx, nil); err != nil {
							return
						}
						if _, err := c.Observe(ctx, nil); err != nil {
							return
						}
						if err := c.Click(ctx, aci.Px(400, 300)); err != nil {
							return
						}
						mu.Lock()
						iters = append(iters, time.Since(t0))
						mu.Unlock()
						if first {
							ready <- struct{}{}
							first = false
						}
					}
				}()
			}
			for range n {
				<-ready // every agent is looping
			}
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			probes := make([]time.Duration, 0, b.N)
			paths := []string{PathReadyz, PathHealthz}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				resp, err := hc.Get(base(d) + paths[i%2])
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				probes = append(probes, time.Since(t0))
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", paths[i%2], resp.StatusCode)
				}
			}
			b.StopTimer()
			cancel()
			wg.Wait()
			hc.CloseIdleConnections()
			mu.Lock()
			defer mu.Unlock()
			b.ReportMetric(quantile(probes, 0.50).Seconds()*1e3, "probe-p50-ms")
			b.ReportMetric(quantile(probes, 0.99).Seconds()*1e3, "probe-p99-ms")
			b.ReportMetric(quantile(iters, 0.50).Seconds()*1e3, "iter-p50-ms")
			b.ReportMetric(quantile(iters, 0.99).Seconds()*1e3, "iter-p99-ms")
			b.ReportMetric(quantile(probes, 0.99).Seconds()/quantile(iters, 0.50).Seconds(), "probe-p99/iter-p50")
		})
	}
}

// quantile is the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
