package session

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestSweepStale: of the session folders in a temporary folder, Start
// removes those whose lock is free, and leaves a live session's (its lock
// held), a young one (being set up), one with no lock file, and what is
// not a session's folder.
func TestSweepStale(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-2 * staleSetup)
	mk := func(name string, lock, aged bool) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "Xauthority"), []byte("cookie"), 0o600); err != nil {
			t.Fatal(err)
		}
		if lock {
			f, err := lockDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			f.Close() // free again, as when its process died
		}
		if aged {
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	stale := mk(dirPrefix+"stale", true, true)
	live := mk(dirPrefix+"live", true, false)
	held, err := os.Open(filepath.Join(live, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(live, old, old); err != nil {
		t.Fatal(err)
	}
	young := mk(dirPrefix+"young", true, false)
	unlocked := mk(dirPrefix+"nolock", false, true)
	other := mk("other-stale", true, true)

	got := sweepStale(tmp, staleSetup)
	if !slices.Equal(got, []string{stale}) {
		t.Errorf("removed %v, want only %v", got, stale)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale folder is still there: %v", err)
	}
	for _, d := range []string{live, young, unlocked, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
	// Once the live session's process lets go, its folder goes too.
	held.Close()
	if got := sweepStale(tmp, staleSetup); !slices.Equal(got, []string{live}) {
		t.Errorf("after the live lock's release, removed %v, want %v", got, live)
	}
}
