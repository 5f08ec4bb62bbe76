package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// found is what a request shows of the program a name runs.
type found struct {
	path, sha string
	none      bool // no program found
}

// lookFor returns what the request to run name, with PATH path, shows.
func lookFor(t *testing.T, name, path string) found {
	t.Helper()
	req, err := request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &aci.Action{Argv: []string{name}}},
		"r", []string{"PATH=" + path})
	if err != nil {
		t.Fatal(err)
	}
	in, err := req.Command()
	if err != nil {
		t.Fatal(err)
	}
	if in.ProgramID == nil {
		return found{none: true}
	}
	return found{path: in.Program, sha: in.ProgramID.SHA256}
}

// truth is what lookFor must show for the program at path, read afresh.
func truth(t *testing.T, path string) found {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return found{path: real, sha: hex.EncodeToString(sum[:])}
}

// program writes an executable file at path, its contents told apart by
// text.
func program(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n# "+text+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// waitSettled polls until the status of each path is settled (its ctime
// older than the margin a cache demands), so that what the gate learns
// of them is cached: a change made after it must then be seen through
// the cache, not around it.
func waitSettled(t *testing.T, paths ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range paths {
		for {
			k, err := statKey(p)
			if err != nil {
				t.Fatal(err)
			}
			if k.settled(time.Now()) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not settled", p)
			}
			time.Sleep(5 * time.Millisecond) // polling the condition above, with its deadline
		}
	}
}

// cachedProgram reports whether the cache holds the program at path.
func cachedProgram(path string) bool {
	pathCache.Lock()
	defer pathCache.Unlock()
	_, ok := pathCache.programs[path]
	return ok
}

// cachedMissing reports whether the cache holds that dir has no name.
func cachedMissing(dir, name string) bool {
	pathCache.Lock()
	defer pathCache.Unlock()
	_, ok := pathCache.missing[[2]string{dir, name}]
	return ok
}

// seen asks twice (the first fills the cache, the second reads it) and
// checks both against want.
func seen(t *testing.T, name, path string, want found) {
	t.Helper()
	for range 2 {
		if got := lookFor(t, name, path); got != want {
			t.Fatalf("%s on %s: got %+v, want %+v", name, path, got, want)
		}
	}
}

// TestPathCacheNeverStale: each way the program a name runs can change,
// made after the gate cached what it found, is seen at the next request.
// A cache held by nothing (or by the name and PATH alone) fails each.
func TestPathCacheNeverStale(t *testing.T) {
	t.Parallel()
	if !onLocalFS(os.TempDir()) {
		t.Skip("the temporary folder is on a file system the cache does not trust (localFS)")
	}
	t.Run("a program created earlier on PATH", func(t *testing.T) {
		t.Parallel()
		d1, d2 := t.TempDir(), t.TempDir()
		program(t, filepath.Join(d2, "tool"), "second")
		waitSettled(t, d1, d2, filepath.Join(d2, "tool"))
		path := d1 + ":" + d2
		seen(t, "tool", path, truth(t, filepath.Join(d2, "tool")))
		if !cachedMissing(d1, "tool") || !cachedProgram(filepath.Join(d2, "tool")) {
			t.Fatal("nothing cached: the test would not test the cache")
		}
		program(t, filepath.Join(d1, "tool"), "first")
		seen(t, "tool", path, truth(t, filepath.Join(d1, "tool")))
	})
	t.Run("a symlink retargeted", func(t *testing.T) {
		t.Parallel()
		d, targets := t.TempDir(), t.TempDir()
		a, b := filepath.Join(targets, "a"), filepath.Join(targets, "b")
		program(t, a, "a")
		program(t, b, "b")
		link := filepath.Join(d, "tool")
		if err := os.Symlink(a, link); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, d, a, b)
		seen(t, "tool", d, truth(t, a))
		if !cachedProgram(link) {
			t.Fatal("nothing cached")
		}
		// ln -sf: a new link renamed over the old one.
		if err := os.Symlink(b, link+".new"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(link+".new", link); err != nil {
			t.Fatal(err)
		}
		seen(t, "tool", d, truth(t, b))
	})
	t.Run("a symlink retargeted to another name of the same file", func(t *testing.T) {
		t.Parallel()
		d, targets := t.TempDir(), t.TempDir()
		a, b := filepath.Join(targets, "a"), filepath.Join(targets, "b")
		program(t, a, "a")
		if err := os.Link(a, b); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(d, "tool")
		if err := os.Symlink(a, link); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, d, a)
		seen(t, "tool", d, truth(t, a))
		if err := os.Symlink(b, link+".new"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(link+".new", link); err != nil {
			t.Fatal(err)
		}
		seen(t, "tool", d, truth(t, b))
	})
	t.Run("a symlink the program's symlink names retargeted", func(t *testing.T) {
		t.Parallel()
		d, targets := t.TempDir(), t.TempDir()
		a, b, mid := filepath.Join(targets, "a"), filepath.Join(targets, "b"), filepath.Join(targets, "mid")
		program(t, a, "a")
		program(t, b, "b")
		if err := os.Symlink(a, mid); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(d, "tool")
		if err := os.Symlink(mid, link); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, d, targets, a, b)
		seen(t, "tool", d, truth(t, a))
		if !cachedProgram(link) {
			t.Fatal("nothing cached")
		}
		if err := os.Symlink(b, mid+".new"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(mid+".new", mid); err != nil {
			t.Fatal(err)
		}
		seen(t, "tool", d, truth(t, b))
	})
	t.Run("a file replaced by rename", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		tool := filepath.Join(d, "tool")
		program(t, tool, "old")
		waitSettled(t, d, tool)
		seen(t, "tool", d, truth(t, tool))
		if !cachedProgram(tool) {
			t.Fatal("nothing cached")
		}
		program(t, tool+".new", "new") // the same size
		if err := os.Rename(tool+".new", tool); err != nil {
			t.Fatal(err)
		}
		seen(t, "tool", d, truth(t, tool))
	})
	t.Run("a file written in place", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		tool := filepath.Join(d, "tool")
		program(t, tool, "old")
		waitSettled(t, d, tool)
		before := truth(t, tool)
		seen(t, "tool", d, before)
		if !cachedProgram(tool) {
			t.Fatal("nothing cached")
		}
		for i := range 20 { // each rewrite the same size, most within a tick of the last
			f, err := os.OpenFile(tool, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte{'a' + byte(i)}, int64(len("#!/bin/sh\n# "))); err != nil {
				t.Fatal(err)
			}
			f.Close()
			seen(t, "tool", d, truth(t, tool))
		}
		if truth(t, tool) == before {
			t.Fatal("the file did not change")
		}
	})
	t.Run("made not executable", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		tool := filepath.Join(d, "tool")
		program(t, tool, "x")
		waitSettled(t, d, tool)
		seen(t, "tool", d, truth(t, tool))
		if err := os.Chmod(tool, 0o644); err != nil {
			t.Fatal(err)
		}
		seen(t, "tool", d, found{none: true})
	})
	t.Run("a folder replaced", func(t *testing.T) {
		t.Parallel()
		root, other := t.TempDir(), t.TempDir()
		d := filepath.Join(root, "bin")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		program(t, filepath.Join(other, "tool"), "other")
		waitSettled(t, d, filepath.Join(other, "tool"))
		path := d + ":" + other
		seen(t, "tool", path, truth(t, filepath.Join(other, "tool")))
		if !cachedMissing(d, "tool") {
			t.Fatal("nothing cached")
		}
		if err := os.Rename(d, d+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(d+".new", 0o755); err != nil {
			t.Fatal(err)
		}
		program(t, filepath.Join(d+".new", "tool"), "new")
		if err := os.Rename(d+".new", d); err != nil {
			t.Fatal(err)
		}
		seen(t, "tool", path, truth(t, filepath.Join(d, "tool")))
	})
	t.Run("a folder's symlink retargeted", func(t *testing.T) {
		t.Parallel()
		root, empty, full := t.TempDir(), t.TempDir(), t.TempDir()
		program(t, filepath.Join(full, "tool"), "full")
		link := filepath.Join(root, "bin")
		if err := os.Symlink(empty, link); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, empty, full, filepath.Join(full, "tool"))
		seen(t, "tool", link, found{none: true})
		if !cachedMissing(link, "tool") {
			t.Fatal("nothing cached")
		}
		if err := os.Symlink(full, link+".new"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(link+".new", link); err != nil {
			t.Fatal(err)
		}
		seen(t, "tool", link, truth(t, filepath.Join(full, "tool")))
	})
	t.Run("a folder created", func(t *testing.T) {
		t.Parallel()
		d := filepath.Join(t.TempDir(), "later")
		seen(t, "tool", d, found{none: true})
		if !cachedMissing(d, "tool") {
			t.Fatal("nothing cached")
		}
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		program(t, filepath.Join(d, "tool"), "later")
		seen(t, "tool", d, truth(t, filepath.Join(d, "tool")))
	})
	t.Run("a dangling symlink's target created", func(t *testing.T) {
		t.Parallel()
		d1, d2, targets := t.TempDir(), t.TempDir(), t.TempDir()
		program(t, filepath.Join(d2, "tool"), "second")
		target := filepath.Join(targets, "tool")
		if err := os.Symlink(target, filepath.Join(d1, "tool")); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, d1, d2, filepath.Join(d2, "tool"))
		path := d1 + ":" + d2
		seen(t, "tool", path, truth(t, filepath.Join(d2, "tool")))
		program(t, target, "target") // d1 itself does not change
		seen(t, "tool", path, truth(t, target))
	})
}

// TestSettled: a status is trusted only once its ctime is older than a
// tick (two seconds and a tick when the file system keeps no
// nanoseconds), and never when it is ahead of the clock.
func TestSettled(t *testing.T) {
	t.Parallel()
	now := time.Now()
	at := func(d time.Duration, ns bool) fileKey {
		c := now.Add(-d)
		k := fileKey{ctime: c.Unix(), ctimeNs: int64(c.Nanosecond()), mtime: c.Unix(), mtimeNs: int64(c.Nanosecond())}
		if !ns {
			k.ctimeNs, k.mtimeNs = 0, 0
			k.ctime = now.Add(-d).Truncate(time.Second).Unix()
		}
		return k
	}
	for _, tt := range []struct {
		name    string
		key     fileKey
		settled bool
	}{
		{"changed now", at(0, true), false},
		{"changed within a tick", at(3*time.Millisecond, true), false},
		{"changed a second ago", at(time.Second, true), true},
		{"ahead of the clock", at(-time.Second, true), false},
		{"whole seconds, one ago", at(time.Second, false), false},
		{"whole seconds, four ago", at(4*time.Second, false), true},
	} {
		if got := tt.key.settled(now); got != tt.settled {
			t.Errorf("%s: settled %v, want %v", tt.name, got, tt.settled)
		}
	}
}

// TestPathCacheBindMounts: a folder or a program mounted over after the
// gate cached what it found there is seen. The mounts are made in a
// mount namespace of their own: the test runs itself again under
// unshare(1), which needs the privilege to mount.
func TestPathCacheBindMounts(t *testing.T) {
	if os.Getenv("GATE_TEST_MOUNT_NS") == "" {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("no unshare(1)")
		}
		if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
			t.Skipf("no mount namespace: %v", err)
		}
		cmd := exec.Command("unshare", "-m", "--propagation", "private", os.Args[0],
			"-test.run", "^TestPathCacheBindMounts$", "-test.v")
		cmd.Env = append(os.Environ(), "GATE_TEST_MOUNT_NS=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in a mount namespace: %v\n%s", err, out)
		}
		return
	}
	mount := func(t *testing.T, src, dst string) {
		t.Helper()
		if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := syscall.Unmount(dst, 0); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("over a folder", func(t *testing.T) {
		d, other := t.TempDir(), t.TempDir()
		program(t, filepath.Join(other, "tool"), "other")
		waitSettled(t, d, other)
		seen(t, "tool", d, found{none: true})
		if !cachedMissing(d, "tool") {
			t.Fatal("nothing cached")
		}
		mount(t, other, d)
		seen(t, "tool", d, truth(t, filepath.Join(d, "tool")))
	})
	t.Run("over a program", func(t *testing.T) {
		d, other := t.TempDir(), t.TempDir()
		tool := filepath.Join(d, "tool")
		program(t, tool, "tool")
		program(t, filepath.Join(other, "tool"), "over") // the same size
		waitSettled(t, d, tool, filepath.Join(other, "tool"))
		before := truth(t, tool)
		seen(t, "tool", d, before)
		if !cachedProgram(tool) {
			t.Fatal("nothing cached")
		}
		mount(t, filepath.Join(other, "tool"), tool)
		after := truth(t, tool)
		if after == before {
			t.Fatal("the mount changed nothing")
		}
		seen(t, "tool", d, after)
	})
}
