package shinken_test

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shinken.dev/go/shinken/client"
)

// rss returns this process's resident set size in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestLoad has 50 clients screenshot and observe in a loop on the
// headless desktop: no call may fail; it reports the p99 latencies, and
// checks that goroutines and memory come back to the baseline once the
// clients leave. It runs for 2 s; SHINKEN_LOAD=60s runs it as the issue
// asks (a minute).
func TestLoad(t *testing.T) {
	dur := 2 * time.Second
	if s := os.Getenv("SHINKEN_LOAD"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SHINKEN_LOAD: %v", err)
		}
		dur = d
	}
	const clients = 50
	e := newEnv(t, nil)
	ctx := testCtx(t)
	if dur > 20*time.Second {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), dur+time.Minute)
		defer cancel()
	}
	// Warm up: one client, so that pools and caches are part of the
	// baseline, then measure it.
	warm, err := client.Dial(ctx, e.url, &client.DialOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	warm.Screenshot(ctx, nil)
	warm.Observe(ctx, nil)
	warm.Close()
	runtime.GC()
	debug.FreeOSMemory()
	baseG, baseRSS := runtime.NumGoroutine(), rss(t)

	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	stop := time.Now().Add(dur)
	for i := range clients {
		// Not e.dial: its cleanup would keep every client (and the last
		// image each decoded) reachable until the test ends.
		c, err := client.Dial(ctx, e.url, &client.DialOptions{Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			var mine = map[string][]time.Duration{}
			for n := 0; time.Now().Before(stop); n++ {
				start := time.Now()
				// Every other screenshot skips revalidation, so encodes
				// happen, not only not_modified answers.
				req := &client.ScreenshotRequest{}
				if (n+i)%2 == 0 {
					req.MaxLongEdge = 640 + n%2
				}
				if _, err := c.Screenshot(ctx, req); err != nil {
					errs <- err
					return
				}
				mine["screenshot"] = append(mine["screenshot"], time.Since(start))
				start = time.Now()
				if _, err := c.Observe(ctx, nil); err != nil {
					errs <- err
					return
				}
				mine["observe"] = append(mine["observe"], time.Since(start))
			}
			mu.Lock()
			for k, v := range mine {
				lat[k] = append(lat[k], v...)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, verb := range []string{"screenshot", "observe"} {
		l := lat[verb]
		slices.Sort(l)
		if len(l) == 0 {
			t.Fatalf("no %s done", verb)
		}
		q := func(p float64) time.Duration { return l[min(len(l)-1, int(p*float64(len(l))))] }
		t.Logf("%s: %d calls by %d clients in %v: p50 %v p99 %v max %v", verb, len(l), clients, dur, q(.5), q(.99), l[len(l)-1])
	}

	// The sessions end asynchronously after Close: wait for the runtime to
	// count them gone, then for their goroutines.
	deadline := time.Now().Add(20 * time.Second)
	for e.rt.Sessions() > 0 || runtime.NumGoroutine() > baseG+2 {
		if time.Now().After(deadline) {
			t.Fatalf("after the clients left: %d sessions, %d goroutines (baseline %d)", e.rt.Sessions(), runtime.NumGoroutine(), baseG)
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond) // polling for teardown; nothing to select on
	}
	runtime.GC()
	debug.FreeOSMemory()
	after := rss(t)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use %d MiB, idle %d MiB, released %d MiB, sys %d MiB", ms.HeapInuse>>20, ms.HeapIdle>>20, ms.HeapReleased>>20, ms.Sys>>20)
	t.Logf("RSS: baseline %d MiB, after %d MiB; goroutines: baseline %d, after %d", baseRSS>>20, after>>20, baseG, runtime.NumGoroutine())
	// Freed memory is handed back to the OS, but not every page of it: allow
	// the heap's slack on top of the baseline.
	if !raceEnabled && after > baseRSS+64<<20 {
		t.Errorf("RSS %d MiB after the load, baseline %d MiB", after>>20, baseRSS>>20)
	}
}
