package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// probeload builds testdata/probeload, the outside side of
// BenchmarkProbesFromOutside, into dir.
func probeload(dir string) (string, error) {
	bin := filepath.Join(dir, "probeload")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/probeload").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build probeload: %v\n%s", err, out)
	}
	return bin, nil
}

// BenchmarkProbesFromOutside is what a kubelet sees: N agents, each
// looping a screenshot, an observe and a click on a headless desktop, run
// in a process of their own, while a prober, a third process, GETs
// /readyz and /healthz in turn (b.N probes). It reports the probes' p50,
// p99 and max as the prober measured them, beside the p50 of a probe of
// the same daemon at rest, measured in the same run (the reference).
func BenchmarkProbesFromOutside(b *testing.B) {
	bin, err := probeload(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 50, 200} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			d := startDaemon(b, &Options{Token: "tok", DrainTimeout: time.Second})
			atRest := outsideProbes(b, bin, base(d), 200)
			agents := exec.Command(bin, "-base", base(d), "-token", "tok", "-clients", strconv.Itoa(n))
			stdin, err := agents.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			stdout, err := agents.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			agents.Stderr = os.Stderr
			if err := agents.Start(); err != nil {
				b.Fatal(err)
			}
			stopped := false
			stop := func() {
				if !stopped {
					stopped = true
					stdin.Close()
					if err := agents.Wait(); err != nil {
						b.Errorf("the agents: %v", err)
					}
				}
			}
			defer stop()
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "looping\n" {
				b.Fatalf("the agents did not start looping: %q, %v", line, err)
			}
			b.ResetTimer()
			probes := outsideProbes(b, bin, base(d), b.N)
			b.StopTimer()
			stop()
			b.ReportMetric(ms(quantile(probes, 0.50)), "probe-p50-ms")
			b.ReportMetric(ms(quantile(probes, 0.99)), "probe-p99-ms")
			b.ReportMetric(ms(slices.Max(probes)), "probe-max-ms")
			b.ReportMetric(ms(quantile(atRest, 0.50)), "rest-p50-ms")
			b.ReportMetric(float64(quantile(probes, 0.99))/float64(quantile(atRest, 0.50)), "p99/rest-p50")
		})
	}
}

// outsideProbes runs the prober for n probes of base, and returns the
// latencies it measured.
func outsideProbes(b *testing.B, bin, base string, n int) []time.Duration {
	b.Helper()
	cmd := exec.Command(bin, "-base", base, "-probes", strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("the prober: %v", err)
	}
	var ds []time.Duration
	for f := range strings.FieldsSeq(string(out)) {
		us, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("the prober wrote %q", f)
		}
		ds = append(ds, time.Duration(us)*time.Microsecond)
	}
	if len(ds) != n {
		b.Fatalf("the prober measured %d probes, want %d", len(ds), n)
	}
	return ds
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }
