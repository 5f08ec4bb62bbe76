package agentuser_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"shinken.dev/go/internal/agentuser"
	"shinken.dev/go/internal/agentusertest"
)

// TestLookup: a user is found by name and by uid alike, with its groups,
// and root is refused.
func TestLookup(t *testing.T) {
	u := agentusertest.Need(t)
	byID, err := agentuser.Lookup(strconv.Itoa(int(u.UID)))
	if err != nil {
		t.Fatal(err)
	}
	if byID.Name != u.Name || byID.GID != u.GID || byID.Home != u.Home || !slices.Equal(byID.Groups, u.Groups) {
		t.Errorf("by uid %+v, by name %+v", byID, u)
	}
	for _, name := range []string{"root", "0", ""} {
		if _, err := agentuser.Lookup(name); err == nil {
			t.Errorf("Lookup(%q) accepted", name)
		}
	}
}

// TestEnv: HOME, USER and LOGNAME are the user's, once each.
func TestEnv(t *testing.T) {
	u := &agentuser.User{Name: "a", Home: "/home/a"}
	got := u.Env([]string{"PATH=/bin", "HOME=/root", "USER=root", "HOME=/x"})
	want := []string{"PATH=/bin", "HOME=/home/a", "USER=a", "LOGNAME=a"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

// TestReach: what the user can write or read, file by file, and through
// the folders above; a sticky folder open to all lets no one replace
// another's entry.
func TestReach(t *testing.T) {
	u := agentusertest.Need(t)
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	sticky := filepath.Join(dir, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	file := filepath.Join(sticky, "f")
	os.WriteFile(file, []byte("x"), 0o600)
	if r, err := u.CanWrite(file); err != nil || r != nil {
		t.Errorf("CanWrite(a root file 0600 in a sticky folder) = %v, %v; want out of reach", r, err)
	}
	if r, err := u.CanWrite(sticky); err != nil || r == nil {
		t.Errorf("CanWrite(the sticky folder itself) = %v, %v; want within reach", r, err)
	}
	if r, err := u.CanRead(file); err != nil || r != nil {
		t.Errorf("CanRead(0600) = %v, %v", r, err)
	}
	os.Chmod(file, 0o644)
	if r, err := u.CanRead(file); err != nil || r == nil {
		t.Errorf("CanRead(0644) = %v, %v; want readable", r, err)
	}
	os.Chmod(dir, 0o700)
	if r, err := u.CanRead(file); err != nil || r != nil {
		t.Errorf("CanRead(0644 under a 0700 folder) = %v, %v; want unreadable", r, err)
	}
	os.Chmod(dir, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(u.Home, link)
	if r, err := u.CanWrite(link); err != nil || r == nil {
		t.Errorf("CanWrite(a link to the user's home) = %v, %v; want within reach", r, err)
	}
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "a", "b"), 0o755)
	if r, err := u.CanWriteTree(tree); err != nil || r != nil {
		t.Errorf("CanWriteTree = %v, %v", r, err)
	}
	os.Symlink(u.Home, filepath.Join(tree, "a", "b", "out"))
	if r, err := u.CanWriteTree(tree); err != nil || r == nil {
		t.Errorf("CanWriteTree with a link out to the user's home = %v, %v; want within reach", r, err)
	}
}
