package escouade_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/procfs"
)

// engines are the two places a run.js or run.wasm plugin may run, which
// the benchmarks below compare side by side, in one run.
var engines = []struct {
	name   string
	engine escouade.Engine
}{{"in-process", escouade.EngineInProcess}, {"isolated", escouade.EngineIsolated}}

// BenchmarkWASMStart is the start of a run.wasm plugin of about 3 MB, from
// a Host just made, its compilation cache warm: what a restart of the
// application costs, up to the answer to initialize.
func BenchmarkWASMStart(b *testing.B) {
	cache := filepath.Join(testTemp, "bench-cache")
	dir := writePlugin(b, "wasmstart", `"run":{"wasm":"plugin.wasm"}`, nil)
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), wasmPlugin, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			newHost := func() *escouade.Host {
				return escouade.New(&escouade.Options{Languages: languages, Engine: e.engine, WASMCacheDir: cache, Journal: slog.DiscardHandler, Secrets: escouade.SecretMap{}})
			}
			h := newHost() // warms the cache
			if _, err := h.Start(ctx, dir); err != nil {
				b.Fatal(err)
			}
			h.Close(ctx)
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				h := newHost()
				start := time.Now()
				if _, err := h.Start(ctx, dir); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
				b.StopTimer()
				h.Close(ctx)
				b.StartTimer()
			}
			b.StopTimer()
			reportLatency(b, ds)
			b.ReportMetric(float64(len(wasmPlugin))/(1<<20), "module-MiB")
		})
	}
}

// BenchmarkWASMRestart is the start of a run.wasm plugin in a Host that
// ran it before: in-process, the compiled module is kept in memory;
// isolated, each engine loads it from the compilation cache.
func BenchmarkWASMRestart(b *testing.B) {
	dir := writePlugin(b, "wasmrestart", `"run":{"wasm":"plugin.wasm"}`, nil)
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), wasmPlugin, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			h := escouade.New(&escouade.Options{Languages: languages, Engine: e.engine, WASMCacheDir: filepath.Join(testTemp, "bench-cache"), Journal: slog.DiscardHandler, Secrets: escouade.SecretMap{}})
			defer h.Close(ctx)
			p, err := h.Start(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				p.Stop(ctx)
				b.StartTimer()
				start := time.Now()
				if p, err = h.Start(ctx, dir); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, ds)
		})
	}
}

// BenchmarkJSStart is the start of a run.js plugin, up to its answer to
// initialize: a runtime, the prelude, the script (and, isolated, the
// engine's process).
func BenchmarkJSStart(b *testing.B) {
	src, err := os.ReadFile("testdata/jsplugin/main.js")
	if err != nil {
		b.Fatal(err)
	}
	dir := writePlugin(b, "jsstart", `"run":{"js":"main.js"}`, map[string]string{"main.js": string(src)})
	ctx := context.Background()
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			h := escouade.New(&escouade.Options{Languages: languages, Engine: e.engine, Journal: slog.DiscardHandler, Secrets: escouade.SecretMap{}})
			defer h.Close(ctx)
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				p, err := h.Start(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
				b.StopTimer()
				p.Stop(ctx)
				b.StartTimer()
			}
			b.StopTimer()
			reportLatency(b, ds)
		})
	}
}

// BenchmarkJSDecide is one permissions/decide from the Host to a run.js
// plugin and back: the call round trip of a script.
func BenchmarkJSDecide(b *testing.B) {
	dir := writePlugin(b, "jsdecide", `"run":{"js":"main.js"},"permissions":{"decide":true}`,
		map[string]string{"main.js": `escouade.onDecide(() => ({ decision: "allow" }));`})
	ctx := context.Background()
	about := escouade.About{Project: "p"}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			h := escouade.New(&escouade.Options{
				Languages: languages, Engine: e.engine, Journal: slog.DiscardHandler, Secrets: escouade.SecretMap{},
				Projects: escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}},
			})
			defer h.Close(ctx)
			if _, err := h.Start(ctx, dir); err != nil {
				b.Fatal(err)
			}
			for range 100 {
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
		})
	}
}

// BenchmarkEscouadeCall is one call of escouade.call from the Go module to
// the Host and back: timer/cancel, the cheapest method.
func BenchmarkEscouadeCall(b *testing.B) {
	ctx := context.Background()
	dir := writePlugin(b, "abi", `"run":{"wasm":"plugin.wasm"},"permissions":{"events":["agent.created"]}`, nil)
	if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), wasmPlugin, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			j := newJournal()
			h := escouade.New(&escouade.Options{
				Languages: languages, Engine: e.engine, WASMCacheDir: filepath.Join(testTemp, "bench-cache"), Journal: j.handler(), Secrets: escouade.SecretMap{},
				Projects: escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}},
			})
			defer h.Close(ctx)
			if _, err := h.Start(ctx, dir); err != nil {
				b.Fatal(err)
			}
			run := func(n int) {
				before := len(j.find("abi", "bench done"))
				if _, err := h.Fact(ctx, "agent.created", map[string]any{"mode": "bench", "n": n}, escouade.About{Project: "p"}); err != nil {
					b.Fatal(err)
				}
				for len(j.find("abi", "bench done")) == before {
					<-j.changed
				}
			}
			run(1000) // warm up
			b.ResetTimer()
			run(b.N)
		})
	}
}

// BenchmarkEngineMemory starts 4 plugins of each kind and reports the
// memory they take, per plugin: the growth of the Host's resident set,
// and, isolated, the proportional set of each engine's process (what it
// holds alone, and its share of the pages it shares, the program's code
// among them); its resident set is reported beside.
func BenchmarkEngineMemory(b *testing.B) {
	src, err := os.ReadFile("testdata/jsplugin/main.js")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const n = 4
	for _, kind := range []string{"js", "wasm"} {
		for _, e := range engines {
			b.Run(kind+"/"+e.name, func(b *testing.B) {
				for range b.N {
					h := escouade.New(&escouade.Options{Languages: languages, Engine: e.engine, WASMCacheDir: filepath.Join(testTemp, "bench-cache"), Journal: slog.DiscardHandler, Secrets: escouade.SecretMap{}})
					runtime.GC()
					before := procKiB(os.Getpid(), "status", "VmRSS:")
					var ids []string
					for i := range n {
						id := fmt.Sprintf("mem%s%d", kind, i)
						ids = append(ids, id)
						var dir string
						if kind == "js" {
							dir = writePlugin(b, id, `"run":{"js":"main.js"}`, map[string]string{"main.js": string(src)})
						} else {
							dir = writePlugin(b, id, `"run":{"wasm":"plugin.wasm"}`, nil)
							if err := os.WriteFile(filepath.Join(dir, "plugin.wasm"), wasmPlugin, 0o644); err != nil {
								b.Fatal(err)
							}
						}
						if _, err := h.Start(ctx, dir); err != nil {
							b.Fatal(err)
						}
					}
					runtime.GC()
					total := procKiB(os.Getpid(), "status", "VmRSS:") - before
					var rss int64
					for _, id := range ids {
						for _, pid := range enginePids(id) {
							total += procKiB(pid, "smaps_rollup", "Pss:")
							rss += procKiB(pid, "status", "VmRSS:")
						}
					}
					h.Close(ctx)
					b.ReportMetric(float64(total)/1024/n, "MiB/plugin")
					b.ReportMetric(float64(rss)/1024/n, "engine-RSS-MiB")
				}
			})
		}
	}
}

// procKiB returns the figure of the line key in /proc/pid/file, in KiB
// (0 for a process gone).
func procKiB(pid int, file, key string) int64 {
	kb, _ := procfs.KiB(pid, file, key)
	return kb
}

// BenchmarkFetchOverhead compares a GET to a local TLS server with a plain
// http.Client and with net/fetch from a plugin, by lines, through the test
// hook; both keep their connections alive.
func BenchmarkFetchOverhead(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello"))
	}))
	srv.EnableHTTP2 = false
	srv.StartTLS()
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	f := &netFixture{names: map[string][][]netip.Addr{}, lookups: map[string]int{}}
	f.resolve("api.example.com", []netip.Addr{apiAddr})
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}

	b.Run("plain", func(b *testing.B) {
		c := &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool},
			DialContext:     dial,
		}}
		defer c.CloseIdleConnections()
		for range b.N {
			resp, err := c.Get("https://api.example.com/")
			if err != nil {
				b.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("net/fetch", func(b *testing.B) {
		h := escouade.New(&escouade.Options{
			Languages: languages, Journal: slog.DiscardHandler, Secrets: escouade.SecretMap{},
			Network: &escouade.NetworkOptions{TLS: &tls.Config{RootCAs: pool}},
		})
		defer h.Close(context.Background())
		escouade.SetNetHook(h, f, dial)
		lp := startLinePlugin(b, h, nil, "fetcher", `,"permissions":{"network":["example.com"]}`, "")
		var r fetchResult
		for range b.N {
			if err := lp.call("net/fetch", map[string]any{"url": "https://api.example.com/"}, &r); err != nil || r.Status != 200 {
				b.Fatal(r, err)
			}
		}
	})
}
