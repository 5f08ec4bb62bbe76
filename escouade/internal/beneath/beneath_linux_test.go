package beneath

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func beneathWorld(t testing.TB) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "b", "f.txt"), []byte("f"), 0o644)
	os.WriteFile(filepath.Join(dir, "outside.txt"), []byte("o"), 0o644)
	os.Symlink(filepath.Join(dir, "a", "b"), filepath.Join(dir, "a", "link"))
	os.Symlink("f.txt", filepath.Join(dir, "a", "b", "flink"))
	os.Symlink("nowhere", filepath.Join(dir, "a", "dangling"))
	syscall.Mkfifo(filepath.Join(dir, "a", "fifo"), 0o644)
	os.Mkdir(filepath.Join(dir, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", manifestName), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "p", "code.js"), []byte("//"), 0o644)
	return dir
}

// TestOpenBeneath: what Open opens and refuses, walked and (on
// Linux, where the kernel has it) with openat2, the two compared.
func TestOpenBeneath(t *testing.T) {
	dir := beneathWorld(t)
	tests := []struct {
		rel  string
		flag int
		o    Options
		want error // nil, a sentinel, or os.ErrNotExist
	}{
		{"a/b/f.txt", os.O_RDONLY, Options{}, nil},
		{".", os.O_RDONLY, Options{}, nil},
		{"a/link/f.txt", os.O_RDONLY, Options{}, ErrLinkOnTheWay},
		{"a/b/flink", os.O_RDONLY, Options{}, ErrLinkOnTheWay},
		{"a/dangling", os.O_WRONLY | os.O_CREATE, Options{MkDirs: true}, ErrLinkOnTheWay},
		{"a/nope", os.O_RDONLY, Options{}, os.ErrNotExist},
		{"../outside.txt", os.O_RDONLY, Options{}, ErrNotBeneath},
		{"a/../outside.txt", os.O_RDONLY, Options{}, ErrBadRelative},
		{"/etc/passwd", os.O_RDONLY, Options{}, ErrBadRelative},
		{"p/code.js", os.O_RDONLY, Options{NoPluginFolder: true}, ErrPluginFolder},
		{"p", os.O_RDONLY, Options{NoPluginFolder: true}, ErrPluginFolder},
		{"p/code.js", os.O_RDONLY, Options{NotIn: []string{filepath.Join(dir, "p")}}, ErrPluginFolder},
		{"p/code.js", os.O_RDONLY, Options{}, nil},
		{"a/new/deep.txt", os.O_WRONLY | os.O_CREATE, Options{MkDirs: true}, nil},
	}
	for _, walk := range []bool{false, true} {
		noOpenat2.Store(walk)
		for _, tt := range tests {
			f, err := Open(dir, tt.rel, tt.flag, 0o644, tt.o)
			if f != nil {
				f.Close()
			}
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("walk %v: Open(%q) = %v, want %v", walk, tt.rel, err, tt.want)
			}
		}
	}
	noOpenat2.Store(false)
	// A FIFO opens at once, non-blocking, and is no regular file.
	if _, _, err := OpenRegular(dir, "a/fifo", false); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a FIFO: %v", err)
	}
	os.Link(filepath.Join(dir, "outside.txt"), filepath.Join(dir, "a", "hard"))
	if _, _, err := OpenRegular(dir, "a/hard", true); !errors.Is(err, ErrHardLinked) {
		t.Errorf("a hard link: %v", err)
	}
}

// BenchmarkOpen compares the open of a file two folders down through
// Open (openat2, then the O_NOFOLLOW walk) with os.Root's, the
// reference the Host used before.
func BenchmarkOpen(b *testing.B) {
	dir := beneathWorld(b)
	b.Run("os.Root", func(b *testing.B) {
		for b.Loop() {
			r, err := os.OpenRoot(dir)
			if err != nil {
				b.Fatal(err)
			}
			f, err := r.OpenFile("a/b/f.txt", os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
			r.Close()
		}
	})
	for _, walk := range []bool{false, true} {
		name := "openat2"
		if walk {
			name = "walk"
		}
		b.Run(name, func(b *testing.B) {
			noOpenat2.Store(walk)
			defer noOpenat2.Store(false)
			for b.Loop() {
				f, err := Open(dir, "a/b/f.txt", os.O_RDONLY, 0, Options{})
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
