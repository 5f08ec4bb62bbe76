package machine_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/machine"
)

// TestWriteFileInPlace writes as shell redirection does: an executable
// stays one, a hard link stays shared, a symlink's target is written and
// the link stays a link, and a new file gets the umask's mode.
func TestWriteFileInPlace(t *testing.T) {
	c, _ := execRig(t)
	ctx := t.Context()
	dir := t.TempDir()
	exe := filepath.Join(dir, "run.sh")
	os.WriteFile(exe, []byte("old"), 0o755)
	twin := filepath.Join(dir, "twin")
	if err := os.Link(exe, twin); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, exe, []byte("#!/bin/sh\necho new\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(exe); st.Mode().Perm() != 0o755 {
		t.Errorf("the executable's mode became %v", st.Mode())
	}
	if got, _ := os.ReadFile(twin); string(got) != "#!/bin/sh\necho new\n" {
		t.Errorf("the hard link reads %q: the link was broken", got)
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("t"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink("target", link)
	if err := c.WriteFile(ctx, link, []byte("through")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "through" {
		t.Errorf("the symlink's target reads %q", got)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink became %v", st.Mode())
	}
	// A new file: the mode this process's umask gives.
	ref := filepath.Join(dir, "ref")
	f, err := os.OpenFile(ref, os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, _ := os.Stat(ref)
	if err := c.WriteFile(ctx, filepath.Join(dir, "new"), []byte("n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "new")); st.Mode() != want.Mode() {
		t.Errorf("a new file's mode is %v, the umask gives %v", st.Mode(), want.Mode())
	}
	st, err := c.Stat(ctx, link)
	if err != nil || st.Kind != "symlink" || st.Target != "target" {
		t.Errorf("Stat(link) = %+v, %v", st, err)
	}
	st, err = c.Stat(ctx, exe)
	if err != nil || st.Kind != "file" || st.Mode != 0o755 || st.Size != int64(len("#!/bin/sh\necho new\n")) || time.Since(st.ModTime) > time.Hour {
		t.Errorf("Stat(exe) = %+v, %v", st, err)
	}
}

// TestFilePaths resolves relative paths and ~ against Home, takes names
// starting with "-" and refuses an empty path with invalid_action.
func TestFilePaths(t *testing.T) {
	home := t.TempDir()
	c, _ := execRigWith(t, &machine.Options{Home: home})
	ctx := t.Context()
	for _, p := range []string{"-rf", "--", "-", "a b", "~/-n", "sub/../-x", "é\n"} {
		if err := c.WriteFile(ctx, p, []byte(p)); err != nil {
			t.Fatalf("WriteFile(%q): %v", p, err)
		}
		abs, err := c.Abs(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(abs, home+"/") {
			t.Fatalf("Abs(%q) = %q, not in %s", p, abs, home)
		}
		if got, err := os.ReadFile(abs); err != nil || string(got) != p {
			t.Fatalf("%s reads %q, %v", abs, got, err)
		}
		if got, err := c.ReadFile(ctx, p, nil); err != nil || string(got) != p {
			t.Fatalf("ReadFile(%q) = %q, %v", p, got, err)
		}
	}
	if got, _ := c.Abs(ctx, "~"); got != home {
		t.Errorf("Abs(~) = %q", got)
	}
	if _, err := c.Abs(ctx, ""); !errors.Is(err, aci.ErrInvalidAction) {
		t.Errorf("an empty path: %v", err)
	}
	// Without Home, the runtime's: this process's home.
	c2, _ := execRig(t)
	want, _ := os.UserHomeDir()
	if got, err := c2.Abs(ctx, "x"); err != nil || got != filepath.Join(want, "x") {
		t.Errorf("Abs(x) without Home = %q, %v; want it in %s", got, err, want)
	}
}

// TestFileChunks moves a file larger than a chunk both ways, writes at
// offsets and appends.
func TestFileChunks(t *testing.T) {
	c, _ := execRig(t)
	ctx := t.Context()
	dir := t.TempDir()
	data := make([]byte, 3*machine.MaxChunk+12345)
	for i := range data {
		data[i] = byte(i*31 + i>>9)
	}
	p := filepath.Join(dir, "big")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadFile(ctx, p, &machine.ReadOptions{MaxBytes: int64(len(data))})
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadFile: %d bytes, %v", len(got), err)
	}
	if _, err := c.ReadFile(ctx, p, &machine.ReadOptions{MaxBytes: int64(len(data)) - 1}); !errors.Is(err, aci.ErrTooLarge) {
		t.Fatalf("ReadFile over MaxBytes: %v", err)
	}
	chunk, size, err := c.ReadFileAt(ctx, p, int64(len(data))-10, 100)
	if err != nil || size != int64(len(data)) || !bytes.Equal(chunk, data[len(data)-10:]) {
		t.Fatalf("ReadFileAt the end: %d bytes, size %d, %v", len(chunk), size, err)
	}
	if chunk, _, err := c.ReadFileAt(ctx, p, int64(len(data))+5, 100); err != nil || len(chunk) != 0 {
		t.Fatalf("ReadFileAt past the end: %d bytes, %v", len(chunk), err)
	}
	q := filepath.Join(dir, "copy")
	for off := 0; off < len(data); off += machine.MaxChunk {
		end := min(off+machine.MaxChunk, len(data))
		if err := c.AppendFile(ctx, q, data[off:end]); err != nil {
			t.Fatal(err)
		}
	}
	if sum(t, q) != sha256.Sum256(data) {
		t.Fatal("appended chunks differ")
	}
	// At offsets, out of order, one not aligned; then past the end.
	r := filepath.Join(dir, "at")
	parts := [][2]int{{700001, len(data)}, {0, 3}, {3, 700001}}
	for _, pt := range parts {
		if err := c.WriteFileAt(ctx, r, data[pt[0]:pt[1]], int64(pt[0])); err != nil {
			t.Fatal(err)
		}
	}
	if sum(t, r) != sha256.Sum256(data) {
		t.Fatal("chunks written at offsets differ")
	}
	if err := c.WriteFileAt(ctx, r, []byte("x"), int64(len(data))+3); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(r); len(got) != len(data)+4 || !bytes.Equal(got[len(data):], []byte("\x00\x00\x00x")) {
		t.Fatalf("a write past the end left %d bytes", len(got))
	}
	// Larger than one exec carries: several, and the same file.
	huge := bytes.Repeat([]byte("0123456789abcdef"), machine.MaxWrite/16+1000)
	if err := c.WriteFile(ctx, r, huge); err != nil {
		t.Fatal(err)
	}
	if sum(t, r) != sha256.Sum256(huge) {
		t.Fatal("a write over MaxWrite differs")
	}
}

func sum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestListDirPages lists a folder of 20,000 entries in pages: every entry
// once, in the documented order, the cursor holding across an entry
// removed and one added between pages.
func TestListDirPages(t *testing.T) {
	c, _ := execRig(t)
	ctx := t.Context()
	dir := t.TempDir()
	var want []string
	for i := range 20000 {
		name := fmt.Sprintf("f%05d", i)
		switch i % 1000 {
		case 1:
			name = "." + name
		case 2:
			name = ".." + name
		case 3:
			name = "-" + name
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	os.Mkdir(filepath.Join(dir, "zdir"), 0o755)
	os.Symlink("nowhere", filepath.Join(dir, "zlink"))
	want = append(want, "zdir", "zlink")
	group := func(s string) int {
		switch {
		case strings.HasPrefix(s, ".."):
			return 3
		case strings.HasPrefix(s, "."):
			return 2
		}
		return 1
	}
	slices.SortFunc(want, func(a, b string) int {
		if d := group(a) - group(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	start := time.Now()
	page, err := c.ListDirPage(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the first page of %d entries came in %v", len(page.Entries), time.Since(start))
	var got []string
	pages := 0
	for {
		pages++
		for _, e := range page.Entries {
			got = append(got, e.Name)
		}
		if page.Next == "" {
			break
		}
		if pages == 3 {
			// Between pages: one entry gone from the pages before, one
			// from the pages after, one added after.
			os.Remove(filepath.Join(dir, got[0]))
			os.Remove(filepath.Join(dir, "f19999"))
			os.WriteFile(filepath.Join(dir, "f19999x"), nil, 0o644)
			want = slices.DeleteFunc(want, func(s string) bool { return s == "f19999" })
			want = slices.Insert(want, slices.Index(want, "zdir"), "f19999x")
		}
		if page, err = c.ListDirPage(ctx, dir, &machine.ListOptions{Cursor: page.Next}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%d entries in %d pages; want %d (first difference at %d)", len(got), pages, len(want), firstDiff(got, want))
	}
	all, err := c.ListDir(ctx, dir)
	if err != nil || len(all) != len(want)-1 {
		t.Fatalf("ListDir: %d entries, %v", len(all), err)
	}
	kinds := map[string]string{}
	for _, e := range all {
		kinds[e.Name] = e.Kind
	}
	if kinds["zdir"] != "dir" || kinds["zlink"] != "symlink" || kinds["f00000"] != "file" {
		t.Fatalf("kinds %q %q %q", kinds["zdir"], kinds["zlink"], kinds["f00000"])
	}
	if _, err := c.ListDirPage(ctx, dir, &machine.ListOptions{Limit: machine.MaxListPage + 1}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("a page over MaxListPage: %v", err)
	}
	// Emptied, the folder lists empty.
	empty := t.TempDir()
	if page, err := c.ListDirPage(ctx, empty, nil); err != nil || len(page.Entries) != 0 || page.Next != "" {
		t.Fatalf("an empty folder: %+v, %v", page, err)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestFileTree makes, moves and removes folders and files.
func TestFileTree(t *testing.T) {
	c, _ := execRig(t)
	ctx := t.Context()
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c")
	if err := c.MkdirAll(ctx, deep); err != nil {
		t.Fatal(err)
	}
	if err := c.MkdirAll(ctx, deep); err != nil {
		t.Fatalf("MkdirAll of a folder already there: %v", err)
	}
	if err := c.Mkdir(ctx, filepath.Join(deep, "d")); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Exists(ctx, filepath.Join(deep, "d")); !ok || err != nil {
		t.Fatalf("Exists(d) = %v, %v", ok, err)
	}
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	if ok, err := c.Exists(ctx, filepath.Join(dir, "dangling")); !ok || err != nil {
		t.Fatalf("Exists(dangling symlink) = %v, %v", ok, err)
	}
	if ok, err := c.Exists(ctx, filepath.Join(dir, "nope")); ok || err != nil {
		t.Fatalf("Exists(nope) = %v, %v", ok, err)
	}
	os.WriteFile(filepath.Join(deep, "f"), []byte("f"), 0o644)
	// A folder moves with its contents, to the name given (not into a
	// folder there).
	os.Mkdir(filepath.Join(dir, "x"), 0o755)
	if err := c.Rename(ctx, filepath.Join(dir, "a"), filepath.Join(dir, "x"), nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Rename onto a folder: %v", err)
	}
	if err := c.Rename(ctx, filepath.Join(dir, "a"), filepath.Join(dir, "moved"), nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "moved", "b", "c", "f")); err != nil || string(got) != "f" {
		t.Fatalf("after the move: %q, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, "g"), []byte("g"), 0o644)
	if err := c.Rename(ctx, filepath.Join(dir, "g"), filepath.Join(dir, "moved", "b", "c", "f"), &machine.RenameOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, filepath.Join(dir, "moved")); !errors.Is(err, machine.ErrNotEmpty) {
		t.Fatalf("Remove of a folder with entries: %v", err)
	}
	if err := c.Remove(ctx, filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveAll(ctx, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}
