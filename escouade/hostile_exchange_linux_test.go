package escouade_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

// TestHostileFolderExchange is issue 39's race: while another process
// exchanges a folder the plugin may read with a private project's folder,
// and another with the agent's .ssh, again and again (renameat2
// RENAME_EXCHANGE, no link anywhere), a plugin reads and writes through
// the readable names 10,000 times. fs/* judges what it opens, by the
// identity of the folders its rules refuse, walking from the root down
// with a descriptor held per folder: nothing of the private project and
// no key is ever read, and neither folder is ever written.
func TestHostileFolderExchange(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "home")
	priv := filepath.Join(home, "private")
	for _, d := range []string{filepath.Join(home, "pub"), filepath.Join(home, "pub2"), priv, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{
		"pub/notes.txt": "public", "private/notes.txt": "PRIVATE",
		"pub2/id_rsa": "not a key", ".ssh/id_rsa": "KEY",
	} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := newValidator(t)
	h, _ := hookedHost(t, nil, v, &escouade.Options{
		Agents: escouade.AgentMap{"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Roots: escouade.AgentRoots{Agent: home}, Project: "pub"}},
		Projects: escouade.ProjectMap{
			"pub":  {Project: protocol.Project{ID: "pub", Name: "Pub"}, Root: base},
			"priv": {Project: protocol.Project{ID: "priv", Name: "Priv", Private: true}, Root: priv},
		},
	})
	a := startLinePlugin(t, h, v, "fsx", `,"permissions":{"files":{"agent":"write"}}`, "")
	if err := a.p.Attach(context.Background(), "k1"); err != nil {
		t.Fatal(err)
	}
	// The Host sees the folders as they are before the exchanges start.
	read := func(path string) (string, error) {
		var res map[string]any
		err := a.call("fs/read", map[string]any{"agent": "k1", "root": "agent", "path": path}, &res)
		s, _ := res["text"].(string)
		return s, err
	}
	for _, p := range []string{"pub/notes.txt", "pub2/id_rsa"} {
		if _, err := read(p); err != nil {
			t.Fatalf("%s before the exchanges: %v", p, err)
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, pair := range [][2]string{{"pub", "private"}, {"pub2", ".ssh"}} {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				unix.Renameat2(unix.AT_FDCWD, filepath.Join(home, pair[0]), unix.AT_FDCWD, filepath.Join(home, pair[1]), unix.RENAME_EXCHANGE)
			}
		})
	}
	const rounds = 10000
	leaks, answered := 0, 0
	for i := range rounds {
		path := "pub/notes.txt"
		if i%2 == 1 {
			path = "pub2/id_rsa"
		}
		text, err := read(path)
		if err == nil {
			answered++
		}
		if strings.Contains(text, "PRIVATE") || strings.Contains(text, "KEY") {
			leaks++
		}
		w := "pub/written.txt"
		if i%2 == 1 {
			w = "pub2/authorized_keys"
		}
		if i%10 == 0 {
			a.call("fs/write", map[string]any{"agent": "k1", "root": "agent", "path": w, "text": "ssh-rsa evil", "append": true}, nil)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d of %d reads answered, %d leaks", answered, rounds, leaks)
	if answered == 0 {
		t.Errorf("every read was refused: the readable folders must stay readable under their names")
	}
	if leaks > 0 {
		t.Errorf("%d of %d reads returned the private project's or the key's contents", leaks, rounds)
	}
	// The private folder and .ssh, wherever they are named now, hold
	// nothing written.
	for _, d := range []string{"pub", "private", "pub2", ".ssh"} {
		dir := filepath.Join(home, d)
		b, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
		k, _ := os.ReadFile(filepath.Join(dir, "id_rsa"))
		if string(b) == "PRIVATE" || string(k) == "KEY" {
			for _, f := range []string{"written.txt", "authorized_keys"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s was written into the refused folder now named %s", f, d)
				}
			}
		}
	}
}
