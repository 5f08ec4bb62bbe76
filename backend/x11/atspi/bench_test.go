package atspi

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/shinken"
)

// benchSnapshot measures Snapshot of the active application.
func benchSnapshot(b *testing.B, c *Client, opts shinken.SnapshotOptions) {
	ctx := context.Background()
	nodes := 0
	for b.Loop() {
		tree, err := c.Snapshot(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		if tree.Truncated {
			b.Fatalf("truncated: %s", tree.TruncatedWhy)
		}
		nodes = len(tree.Nodes)
	}
	b.ReportMetric(float64(nodes), "nodes/op")
}

// benchPyatspi runs the pyatspi baseline walk b.N times in one process,
// after one warm-up walk, and reports the mean of the timed walks.
func benchPyatspi(b *testing.B, s *atspitest.Session, app, window string) {
	python := atspitest.Python(b, "pyatspi")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("testdata", "pyatspi_walk.py"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := s.Command(ctx, python, script, app, window, strconv.Itoa(b.N+1))
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("pyatspi walk: %v: %s", err, exitText(err))
	}
	var total, first float64
	nodes, walks := 0, 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var n int
		var ms float64
		if _, err := fmt.Sscan(sc.Text(), &n, &ms); err != nil {
			b.Fatalf("pyatspi walk printed %q", sc.Text())
		}
		if walks == 0 {
			first = ms
		} else {
			total += ms
		}
		nodes = n
		walks++
	}
	if walks != b.N+1 {
		b.Fatalf("pyatspi walk made %d walks, want %d", walks, b.N+1)
	}
	b.ReportMetric(total*1e6/float64(b.N), "ns/op")
	b.ReportMetric(first, "first-ms")
	b.ReportMetric(float64(nodes), "nodes/op")
}

func exitText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// BenchmarkGtk3Demo compares a Snapshot of gtk3-demo's main window with a
// plain pyatspi walk that reads role, name, states and extents of every
// node, in the same session. "atspi" is a repeated snapshot, which reuses
// what events say still holds; "atspi-nocache" reads everything again, as a
// first snapshot does.
func BenchmarkGtk3Demo(b *testing.B) {
	s := atspitest.Start(b)
	s.Launch(b, "gtk3-demo")
	c := connect(b, s, nil)
	waitTree(b, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "gtk3-demo's main window", func(t *shinken.Tree) bool {
		return t.App == "gtk3-demo" && len(t.Nodes) > 150
	})
	nocache := connect(b, s, &Options{NoCache: true})
	b.Run("atspi", func(b *testing.B) { benchSnapshot(b, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}) })
	b.Run("atspi-nocache", func(b *testing.B) {
		benchSnapshot(b, nocache, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
	})
	b.Run("pyatspi", func(b *testing.B) { benchPyatspi(b, s, "gtk3-demo", "Application Class") })
}

// BenchmarkRows2000 measures a Snapshot of a 2,000-node GTK window: a list
// box of 1,000 rows (each a row and a label), which no toolkit cache
// holds, and a box of 2,000 labels, which the cache holds entirely.
func BenchmarkRows2000(b *testing.B) {
	for _, kind := range []struct{ name, rows string }{{"listbox", "1000"}, {"box", "2000"}} {
		b.Run(kind.name, func(b *testing.B) {
			s := atspitest.Start(b)
			python := atspitest.Python(b, "gi")
			script, err := filepath.Abs(filepath.Join("testdata", "rows.py"))
			if err != nil {
				b.Fatal(err)
			}
			s.Launch(b, python, script, kind.rows, kind.name)
			c := connect(b, s, nil)
			waitTree(b, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}, "2,000 rows", func(t *shinken.Tree) bool {
				return len(t.Nodes) >= 2000
			})
			nocache := connect(b, s, &Options{NoCache: true})
			b.Run("atspi", func(b *testing.B) { benchSnapshot(b, c, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp}) })
			b.Run("atspi-nocache", func(b *testing.B) {
				benchSnapshot(b, nocache, shinken.SnapshotOptions{Scope: shinken.TreeActiveApp})
			})
		})
	}
}
