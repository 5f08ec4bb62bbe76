// Package proctest waits, in tests, for the processes a test started
// through the runtime: for the pids they wrote down, and for them to end.
// Its deadlines are hang guards, minutes long; the waits end as soon as
// what they wait for is there.
package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/internal/procfs"
)

// PIDFiles waits until each file names in dir holds a pid, written whole
// (a job writes it to a temporary name and renames it), and returns the
// pids, each checked alive.
func PIDFiles(t testing.TB, dir string, names ...string) []int {
	t.Helper()
	var pids []int
	deadline := time.Now().Add(2 * time.Minute)
	for _, n := range names {
		for {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err == nil {
				p, err := strconv.Atoi(strings.TrimSpace(string(b)))
				if err != nil {
					t.Fatalf("%s: %v", n, err)
				}
				pids = append(pids, p)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never came: the job never started", n)
			}
			time.Sleep(10 * time.Millisecond) // polls for the file, bounded by the deadline
		}
	}
	Alive(t, pids...)
	return pids
}

// Numbered is the names "1" to "n", for PIDFiles.
func Numbered(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = strconv.Itoa(i + 1)
	}
	return names
}

// Alive fails t unless every pid is running.
func Alive(t testing.TB, pids ...int) {
	t.Helper()
	for _, p := range pids {
		if !procfs.Alive(p) {
			t.Fatalf("process %d is not running", p)
		}
	}
}

// Gone waits until none of pids runs, and fails t if one still does after
// a minute: it outlived what should have ended it.
func Gone(t testing.TB, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, p := range pids {
		for procfs.Alive(p) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived the session", p)
			}
			time.Sleep(10 * time.Millisecond) // polls the process, bounded by the deadline
		}
	}
}
