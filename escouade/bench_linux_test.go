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
// what it left), held three ways, interleaved in one loop so that each
// sees the same machine: by its process group alone (the reference), by a
// cgroup, and by a shepherd. It reports each way's medians and their
// ratios to the group's.
func BenchmarkContainedStart(b *testing.B) {
	modes := containModes(b)
	defer escouade.SetContainment("auto")()
	h := benchHost(b)
	dir := writePlugin(b, "contained", commandManifest("bench"), nil)
	ctx := context.Background()
	starts := map[string][]time.Duration{}
	stops := map[string][]time.Duration{}
	var pss, rss []int64 // KiB, of each shepherd
	b.ResetTimer()
	for range b.N {
		for _, mode := range modes {
			escouade.SetContainment(mode)
			t0 := time.Now()
			p, err := h.Start(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if mode == "shepherd" {
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
		b.ReportMetric(medianMS(starts[mode]), containmentName[mode]+"-start-ms")
		b.ReportMetric(medianMS(stops[mode]), containmentName[mode]+"-stop-ms")
	}
	if len(pss) > 0 {
		slices.Sort(pss)
		slices.Sort(rss)
		b.ReportMetric(float64(pss[len(pss)/2])/1024, "shepherd-PSS-MiB")
		b.ReportMetric(float64(rss[len(rss)/2])/1024, "shepherd-RSS-MiB")
	}
	for _, mode := range modes[1:] {
		b.ReportMetric(medianMS(starts[mode])/medianMS(starts["group"]), containmentName[mode]+"/group-start")
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
// (sh -c true, from the spawn to proc/exit), held the three ways of
// BenchmarkContainedStart, interleaved: what a shepherd adds to a program
// that costs little itself.
func BenchmarkContainedSpawn(b *testing.B) {
	modes := containModes(b)
	defer escouade.SetContainment("auto")()
	h, _ := hookedHost(b, nil, nil, &escouade.Options{Journal: slog.DiscardHandler})
	lp := startLinePlugin(b, h, nil, "spawner", `,"permissions":{"commands":["sh -c *"]}`, "")
	runs := map[string][]time.Duration{}
	b.ResetTimer()
	for range b.N {
		for _, mode := range modes {
			escouade.SetContainment(mode)
			t0 := time.Now()
			if _, code := lp.run(b, map[string]any{"command": "sh", "args": []string{"-c", "true"}}); code != 0.0 {
				b.Fatalf("code %v", code)
			}
			runs[mode] = append(runs[mode], time.Since(t0))
		}
	}
	b.StopTimer()
	for _, mode := range modes {
		b.ReportMetric(medianMS(runs[mode]), containmentName[mode]+"-ms")
	}
	for _, mode := range modes[1:] {
		b.ReportMetric(medianMS(runs[mode])/medianMS(runs["group"]), containmentName[mode]+"/group")
	}
}

// containModes are the ways to hold descendants that this machine has:
// the group alone, a cgroup where one can be made ("auto"), a shepherd.
func containModes(b *testing.B) []string {
	restore := escouade.SetContainment("auto")
	defer restore()
	if escouade.Containment() != "cgroup" {
		b.Logf("no cgroup can be made here: the group alone and the shepherd only")
		return []string{"group", "shepherd"}
	}
	return []string{"group", "auto", "shepherd"}
}

// medianMS returns the median of ds in milliseconds (ds is sorted).
func medianMS(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Nanoseconds()) / 1e6
}

// containmentName names each containment mode in the metrics.
var containmentName = map[string]string{"group": "group", "auto": "cgroup", "shepherd": "shepherd"}
