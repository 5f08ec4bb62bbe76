package escouade_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/escouade"
)

// BenchmarkContainedStart starts a command plugin (this test binary, to
// its answer to initialize) and stops it (shutdown, its end, the sweep of
// what it left), held each way this machine has, interleaved in one loop
// (each iteration in another order) so that each sees the same machine: by its process group alone (the
// reference), by a cgroup, and by a shepherd, each of the last two with
// and without a pid namespace. It reports each way's medians and their
// ratios to the group's, and those of each way with a namespace to the
// same way without.
func BenchmarkContainedStart(b *testing.B) {
	modes := containModes(b)
	h := benchHost(b)
	dir := writePlugin(b, "contained", commandManifest("bench"), nil)
	ctx := context.Background()
	starts := map[containWay][]time.Duration{}
	stops := map[containWay][]time.Duration{}
	var pss, rss []int64 // KiB, of each shepherd
	b.ResetTimer()
	for i := range b.N {
		for _, mode := range rotated(modes, i) {
			mode.set()
			t0 := time.Now()
			p, err := h.Start(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if mode.mode == "shepherd" {
				for _, pid := range shepherdPids() {
					pss = append(pss, procKiB(pid, "smaps_rollup", "Pss:"))
					rss = append(rss, procKiB(pid, "status", "VmRSS:"))
				}
				t1 = time.Now()
			}
			if err := p.Stop(ctx); err != nil {
				b.Fatal(err)
			}
			starts[mode] = append(starts[mode], t1.Sub(t0))
			stops[mode] = append(stops[mode], time.Since(t1))
		}
	}
	b.StopTimer()
	for _, mode := range modes {
		b.ReportMetric(medianMS(starts[mode]), mode.name+"-start-ms")
		b.ReportMetric(medianMS(stops[mode]), mode.name+"-stop-ms")
	}
	if len(pss) > 0 {
		slices.Sort(pss)
		slices.Sort(rss)
		b.ReportMetric(float64(pss[len(pss)/2])/1024, "shepherd-PSS-MiB")
		b.ReportMetric(float64(rss[len(rss)/2])/1024, "shepherd-RSS-MiB")
	}
	for _, mode := range modes[1:] {
		b.ReportMetric(medianMS(starts[mode])/medianMS(starts[modes[0]]), mode.name+"/group-start")
		if without, ok := mode.without(modes); ok {
			b.ReportMetric(medianMS(starts[mode])/medianMS(starts[without]), mode.name+"/"+without.name+"-start")
		}
	}
}

// shepherdPids returns the pids of this process's shepherds.
func shepherdPids() []int {
	var pids []int
	for _, pid := range testProcesses() {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.HasPrefix(string(b), "escouade-shepherd\x00") && isBelow(pid, os.Getpid()) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// BenchmarkContainedSpawn runs a small native program by proc/spawn
// (sh -c true, from the spawn to proc/exit), held the ways of
// BenchmarkContainedStart, interleaved: what a shepherd, and a pid
// namespace, add to a program that costs little itself.
func BenchmarkContainedSpawn(b *testing.B) {
	modes := containModes(b)
	h, _ := hookedHost(b, nil, nil, &escouade.Options{Journal: slog.DiscardHandler})
	lp := startLinePlugin(b, h, nil, "spawner", `,"permissions":{"commands":["sh -c *"]}`, "")
	runs := map[containWay][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		for _, mode := range rotated(modes, i) {
			mode.set()
			t0 := time.Now()
			if _, code := lp.run(b, map[string]any{"command": "sh", "args": []string{"-c", "true"}}); code != 0.0 {
				b.Fatalf("code %v", code)
			}
			runs[mode] = append(runs[mode], time.Since(t0))
		}
	}
	b.StopTimer()
	for _, mode := range modes {
		b.ReportMetric(medianMS(runs[mode]), mode.name+"-ms")
	}
	for _, mode := range modes[1:] {
		b.ReportMetric(medianMS(runs[mode])/medianMS(runs[modes[0]]), mode.name+"/group")
		if without, ok := mode.without(modes); ok {
			b.ReportMetric(medianMS(runs[mode])/medianMS(runs[without]), mode.name+"/"+without.name)
		}
	}
}

// A containWay is a way to hold a program's descendants, as the
// benchmarks name it: a containment mode (see SetContainment), with or
// without a pid namespace.
type containWay struct {
	name, mode string
	ns         bool
}

// set makes the programs started from now on held this way.
func (w containWay) set() {
	escouade.SetContainment(w.mode)
	escouade.SetPIDNamespaces(w.ns)
}

// without returns the way among ways that is w without its namespace.
func (w containWay) without(ways []containWay) (containWay, bool) {
	for _, o := range ways {
		if w.ns && !o.ns && o.mode == w.mode {
			return o, true
		}
	}
	return containWay{}, false
}

// containModes are the ways to hold descendants that this machine has,
// the group alone first: a cgroup where one can be made ("auto"), a
// shepherd, each with a pid namespace too where the Host may make one. It
// leaves the programs held by default (auto, namespaces where they can
// be) once the benchmark ends.
func containModes(b *testing.B) []containWay {
	b.Cleanup(func() {
		escouade.SetContainment("auto")
		escouade.SetPIDNamespaces(true)
	})
	restore := escouade.SetContainment("auto")
	defer restore()
	ways := []containWay{{name: "group", mode: "group"}}
	if escouade.Containment() == "cgroup" {
		ways = append(ways, containWay{name: "cgroup", mode: "auto"})
	} else {
		b.Logf("no cgroup can be made here: the group alone and the shepherd only")
	}
	ways = append(ways, containWay{name: "shepherd", mode: "shepherd"})
	if escouade.PIDNamespaces() {
		for _, w := range ways[1:] {
			ways = append(ways, containWay{name: w.name + "+pidns", mode: w.mode, ns: true})
		}
	} else {
		b.Logf("the Host may make no pid namespace here: none measured")
	}
	return ways
}

// rotated returns ways in the order that begins at its i-th (modulo its
// length): each way follows each other in turn, so that none pays for
// what the one before it left (a shepherd's exit, a cgroup's removal).
func rotated(ways []containWay, i int) []containWay {
	i %= len(ways)
	return append(ways[i:len(ways):len(ways)], ways[:i]...)
}

// medianMS returns the median of ds in milliseconds (ds is sorted).
func medianMS(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Nanoseconds()) / 1e6
}
