package machine_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/machine"
)

// execRig is a headless runtime that runs exec on this machine, its
// Authorizer refusing while deny is set, reached through a schema proxy.
func execRig(t testing.TB) (*agent, *atomic.Bool) {
	t.Helper()
	return execRigWith(t, nil)
}

// execRigWith is execRig with the tools' options.
func execRigWith(t testing.TB, opts *machine.Options) (*agent, *atomic.Bool) {
	t.Helper()
	deny := &atomic.Bool{}
	auth := shinken.AuthorizerFunc(func(_ context.Context, req shinken.AuthRequest) error {
		if deny.Load() {
			return errors.New("the policy forbids commands")
		}
		return nil
	})
	url, _ := schematest.ServeURL(t, headless.New(nil), &shinken.RuntimeOptions{Executor: osexec.New(nil), Authorizer: auth})
	c := schematest.Dial(t, url, nil)
	return &agent{c, machine.New(c, opts)}, deny
}

// TestFiles writes, reads and lists files, binary contents included, and
// checks each failure's error.
func TestFiles(t *testing.T) {
	c, deny := execRig(t)
	ctx := t.Context()
	dir := t.TempDir()
	bin := make([]byte, 70000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	path := filepath.Join(dir, "blob.bin")
	if err := c.WriteFile(ctx, path, bin); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("written %d bytes, %v", len(got), err)
	}
	got, err := c.ReadFile(ctx, path, nil)
	if err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if err := c.WriteFile(ctx, filepath.Join(dir, "empty"), nil); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadFile(ctx, filepath.Join(dir, "empty"), nil); err != nil || len(got) != 0 {
		t.Fatalf("empty file: %q %v", got, err)
	}
	os.Mkdir(filepath.Join(dir, "sub dir"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("h"), 0o644)
	os.Symlink("blob.bin", filepath.Join(dir, "link"))
	list, err := c.ListDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []machine.FileInfo{{".hidden", "file", 1}, {"blob.bin", "file", 70000}, {"empty", "file", 0}, {"link", "symlink", 0}, {"sub dir", "dir", 0}}
	slices.SortFunc(list, func(a, b machine.FileInfo) int { return strings.Compare(a.Name, b.Name) })
	if !slices.Equal(list, want) {
		t.Fatalf("listing %+v, want %+v", list, want)
	}

	for _, tt := range []struct {
		name string
		err  error
		do   func() error
	}{
		{"read missing", fs.ErrNotExist, func() error { _, err := c.ReadFile(ctx, filepath.Join(dir, "nope"), nil); return err }},
		{"read a directory", fs.ErrInvalid, func() error { _, err := c.ReadFile(ctx, dir, nil); return err }},
		{"read too large", aci.ErrTooLarge, func() error {
			_, err := c.ReadFile(ctx, path, &machine.ReadOptions{MaxBytes: 1000})
			return err
		}},
		{"write into a missing directory", fs.ErrNotExist, func() error { return c.WriteFile(ctx, filepath.Join(dir, "no", "x"), []byte("x")) }},
		{"write over a directory", fs.ErrInvalid, func() error { return c.WriteFile(ctx, filepath.Join(dir, "sub dir"), []byte("x")) }},
		{"list missing", fs.ErrNotExist, func() error { _, err := c.ListDir(ctx, filepath.Join(dir, "nope")); return err }},
		{"list a file", fs.ErrInvalid, func() error { _, err := c.ListDir(ctx, path); return err }},
		{"empty path", aci.ErrInvalidAction, func() error { _, err := c.ReadFile(ctx, "", nil); return err }},
		{"another user's home", aci.ErrInvalidAction, func() error { _, err := c.Stat(ctx, "~root/x"); return err }},
		{"stat missing", fs.ErrNotExist, func() error { _, err := c.Stat(ctx, filepath.Join(dir, "nope")); return err }},
		{"mkdir existing", fs.ErrExist, func() error { return c.Mkdir(ctx, filepath.Join(dir, "sub dir")) }},
		{"mkdir missing parent", fs.ErrNotExist, func() error { return c.Mkdir(ctx, filepath.Join(dir, "a", "b")) }},
		{"mkdir -p over a file", fs.ErrInvalid, func() error { return c.MkdirAll(ctx, filepath.Join(path, "x")) }},
		{"rename missing", fs.ErrNotExist, func() error { return c.Rename(ctx, filepath.Join(dir, "nope"), filepath.Join(dir, "n2"), nil) }},
		{"rename onto a file", fs.ErrExist, func() error { return c.Rename(ctx, filepath.Join(dir, "empty"), path, nil) }},
		{"rename onto a folder", fs.ErrInvalid, func() error {
			return c.Rename(ctx, filepath.Join(dir, "empty"), filepath.Join(dir, "sub dir"), &machine.RenameOptions{Overwrite: true})
		}},
		{"remove missing", fs.ErrNotExist, func() error { return c.Remove(ctx, filepath.Join(dir, "nope")) }},
		{"remove a folder with entries", machine.ErrNotEmpty, func() error { return c.Remove(ctx, dir) }},
		{"read past the chunk", aci.ErrInvalidAction, func() error { _, _, err := c.ReadFileAt(ctx, path, 0, machine.MaxChunk+1); return err }},
	} {
		err := tt.do()
		var pe *fs.PathError
		if !errors.Is(err, tt.err) || !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a *fs.PathError wrapping %v", tt.name, err, tt.err)
		}
	}
	deny.Store(true)
	if _, err := c.ReadFile(ctx, path, nil); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("a refused read: %v", err)
	}
	if err := c.WriteFile(ctx, path, []byte("x")); !errors.Is(err, aci.ErrPermissionDenied) {
		t.Fatalf("a refused write: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bin) {
		t.Fatal("a refused write changed the file")
	}
}
