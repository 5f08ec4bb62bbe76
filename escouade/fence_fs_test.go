package escouade_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

// fsWorld is the disk of the fs/* tests: an agent's folders, links in and
// out of them, hidden files, a private project.
type fsWorld struct {
	base, work, repo, home, priv, outside string
}

func newFsWorld(t *testing.T) *fsWorld {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &fsWorld{
		base: base, repo: filepath.Join(base, "repo"), home: filepath.Join(base, "home"),
		priv: filepath.Join(base, "priv"), outside: filepath.Join(base, "outside"),
	}
	w.work = filepath.Join(w.repo, "wt")
	files := map[string]string{
		"repo/README.md":                "readme",
		"repo/.env":                     "TOKEN=x",
		"repo/wt/a.txt":                 "agent file",
		"repo/wt/big.txt":               strings.Repeat("b", 300<<10),
		"home/notes.txt":                "notes",
		"home/.ssh/id_rsa":              "KEY",
		"home/secret-project/s.txt":     "secret",
		"priv/p.txt":                    "private",
		"outside/secret.txt":            "outside",
		"home/secret-project/.keep/k":   "",
		"repo/wt/sub/deeper/nested.txt": "n",
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"repo/wt/out":      w.outside,
		"repo/wt/torepo":   filepath.Join(w.repo, "README.md"),
		"repo/wt/dangling": filepath.Join(w.outside, "new.txt"),
		"repo/wt/hidden":   filepath.Join(w.repo, ".env"),
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(w.work, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestFsFences drives fs/* through every fence the protocol states, and a
// few the Host adds (hidden files, the manifest), by lines, each answer
// checked against the schema.
func TestFsFences(t *testing.T) {
	w := newFsWorld(t)
	v := newValidator(t)
	h, j := hookedHost(t, nil, nil, &escouade.Options{
		Agents: escouade.AgentMap{
			"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Roots: escouade.AgentRoots{Agent: w.work, Repo: w.repo, Home: w.home}, Project: "pub"},
			"k2": {Agent: protocol.Agent{ID: "a2", Name: "Bob"}, Roots: escouade.AgentRoots{Agent: w.priv}, Project: "priv"},
		},
		Projects: escouade.ProjectMap{
			"pub":    {Project: protocol.Project{ID: "pub", Name: "Pub"}, Root: w.repo},
			"priv":   {Project: protocol.Project{ID: "priv", Name: "Priv", Private: true}, Root: w.priv},
			"secret": {Project: protocol.Project{ID: "secret", Name: "Secret", Private: true}, Root: filepath.Join(w.home, "secret-project"), Plugins: map[string]bool{"fsb": true}},
		},
	})
	dir := writePlugin(t, "fsa", `"run":{"js":"main.js"}`, map[string]string{"data.txt": "plugin data", ".env": "X=1"})
	a := startLinePlugin(t, h, v, "fsa", `,"permissions":{"files":{"plugin":"read","temp":"write","agent":"write","agentRepo":"read","agentHome":"read"}}`, dir)
	b := startLinePlugin(t, h, v, "fsb", `,"permissions":{"files":{"temp":"write","agent":"read","agentHome":"read"}},"limits":{"fileBytes":1048576}`, "")
	for _, p := range []*escouade.Plugin{a.p, b.p} {
		for _, k := range []string{"k1", "k2"} {
			if err := p.Attach(context.Background(), k); err != nil {
				t.Fatal(err)
			}
		}
	}
	type params = map[string]any
	k1 := func(root, path string) params { return params{"agent": "k1", "root": root, "path": path} }
	text := func(want string) func(map[string]any) error {
		return func(r map[string]any) error {
			if r["text"] != want {
				return fmt.Errorf("text %v, want %q", r["text"], want)
			}
			return nil
		}
	}
	for _, c := range []struct {
		name   string
		p      *linePlugin
		method string
		params params
		code   protocol.Code
		check  func(map[string]any) error
	}{
		{"read under agent", a, "fs/read", k1("agent", "a.txt"), 0, text("agent file")},
		{"read under agentHome", a, "fs/read", k1("agentHome", "notes.txt"), 0, text("notes")},
		{"read the plugin's folder", a, "fs/read", params{"root": "plugin", "path": "data.txt"}, 0, text("plugin data")},
		{"a root not declared", b, "fs/read", params{"root": "plugin", "path": "data.txt"}, protocol.CodeRefused, nil},
		{"a root declared read, written", a, "fs/write", params{"agent": "k1", "root": "agentRepo", "path": "x.txt", "text": "x"}, protocol.CodeRefused, nil},
		{"..", a, "fs/read", k1("agent", "../README.md"), protocol.CodeRefused, nil},
		{".. inside", a, "fs/read", k1("agent", "sub/../a.txt"), protocol.CodeRefused, nil},
		{"~", a, "fs/read", params{"agent": "k1", "path": "~/notes.txt"}, protocol.CodeRefused, nil},
		{"~ under a root", a, "fs/read", k1("agentHome", "~"), protocol.CodeRefused, nil},
		{"an absolute path with a root", a, "fs/read", k1("agent", filepath.Join(w.work, "a.txt")), protocol.CodeRefused, nil},
		{"an absolute path under a root", a, "fs/read", params{"agent": "k1", "path": filepath.Join(w.work, "a.txt")}, 0, text("agent file")},
		{"an absolute path out of the roots", a, "fs/read", params{"agent": "k1", "path": filepath.Join(w.outside, "secret.txt")}, protocol.CodeRefused, nil},
		{"an absolute path, no agent", a, "fs/read", params{"path": filepath.Join(w.work, "a.txt")}, protocol.CodeRefused, nil},
		{"a relative path without a root", a, "fs/read", params{"agent": "k1", "path": "a.txt"}, protocol.CodeRefused, nil},
		{"a link out of the roots", a, "fs/read", k1("agent", "out/secret.txt"), protocol.CodeRefused, nil},
		{"a link to another root", a, "fs/read", k1("agent", "torepo"), 0, text("readme")},
		{"a write through a link into a read root", a, "fs/write", params{"agent": "k1", "root": "agent", "path": "torepo", "text": "x"}, protocol.CodeRefused, nil},
		{"a write through a dangling link out", a, "fs/write", params{"agent": "k1", "root": "agent", "path": "dangling", "text": "x"}, protocol.CodeRefused, nil},
		{"a link to a hidden file", a, "fs/read", k1("agent", "hidden"), protocol.CodeRefused, nil},
		{"a hidden file", a, "fs/read", k1("agentRepo", ".env"), protocol.CodeRefused, nil},
		{"a hidden folder", a, "fs/read", k1("agentHome", ".ssh/id_rsa"), protocol.CodeRefused, nil},
		{"a hidden file of the plugin", a, "fs/read", params{"root": "plugin", "path": ".env"}, protocol.CodeRefused, nil},
		{"the manifest", a, "fs/read", params{"root": "plugin", "path": "plugin.json"}, protocol.CodeRefused, nil},
		{"the agent of a private project", a, "fs/read", params{"agent": "k2", "root": "agent", "path": "p.txt"}, protocol.CodeRefused, nil},
		{"a private project under the home", a, "fs/read", k1("agentHome", "secret-project/s.txt"), protocol.CodeRefused, nil},
		{"a private project the plugin is on for", b, "fs/read", k1("agentHome", "secret-project/s.txt"), 0, text("secret")},
		{"a private project, listed", a, "fs/list", k1("agentHome", "secret-project"), protocol.CodeRefused, nil},
		{"over 256 KiB", a, "fs/read", k1("agent", "big.txt"), protocol.CodeFailed, nil},
		{"within limits.fileBytes", b, "fs/read", k1("agent", "big.txt"), 0, nil},
		{"over 4 MiB written", a, "fs/write", params{"root": "temp", "path": "huge", "text": strings.Repeat("h", 4<<20+1)}, protocol.CodeFailed, nil},
		{"no such file", a, "fs/read", k1("agent", "nope.txt"), protocol.CodeNotFound, nil},
		{"no such file, stat", a, "fs/stat", k1("agent", "nope.txt"), protocol.CodeNotFound, nil},
		{"no such folder, write has no notFound", a, "fs/write", params{"agent": "k1", "root": "agent", "path": "a.txt/b", "text": "x"}, protocol.CodeFailed, nil},
		{"an agent not attached", a, "fs/read", params{"agent": "k9", "root": "agent", "path": "a.txt"}, protocol.CodeRefused, nil},
		{"an agent's root, no agent", a, "fs/read", params{"root": "agent", "path": "a.txt"}, protocol.CodeInvalidParams, nil},
		{"a root the protocol does not name", a, "fs/read", params{"root": "etc", "path": "passwd"}, protocol.CodeInvalidParams, nil},
		{"a FIFO", a, "fs/read", k1("agent", "fifo"), protocol.CodeFailed, nil},
		{"a folder read", a, "fs/read", k1("agent", "sub"), protocol.CodeFailed, nil},
		{"text and dataBase64", a, "fs/write", params{"root": "temp", "path": "t", "text": "a", "dataBase64": "YQ=="}, protocol.CodeInvalidParams, nil},
		{"canon out of the roots", a, "fs/canon", k1("agent", "out/secret.txt"), protocol.CodeRefused, nil},
		{"canon through a link", a, "fs/canon", k1("agent", "torepo"), 0, func(r map[string]any) error {
			if r["path"] != filepath.Join(w.repo, "README.md") {
				return fmt.Errorf("canon %v", r["path"])
			}
			return nil
		}},
		{"stat a folder", a, "fs/stat", k1("agent", "sub"), 0, func(r map[string]any) error {
			if r["kind"] != "dir" || r["modified"] == nil {
				return fmt.Errorf("stat %v", r)
			}
			return nil
		}},
		{"list: links listed, not followed; hidden left out", a, "fs/list", k1("agent", "."), 0, func(r map[string]any) error {
			got := map[string]string{}
			for _, e := range r["entries"].([]any) {
				e := e.(map[string]any)
				got[e["name"].(string)] = e["kind"].(string)
			}
			want := map[string]string{"a.txt": "file", "big.txt": "file", "sub": "dir", "out": "link", "torepo": "link", "dangling": "link", "hidden": "link", "fifo": "other"}
			if fmt.Sprint(got) != fmt.Sprint(want) || r["truncated"] != false {
				return fmt.Errorf("list %v", r)
			}
			return nil
		}},
		{"list the repo: no .env", a, "fs/list", k1("agentRepo", "."), 0, func(r map[string]any) error {
			if s := fmt.Sprint(r["entries"]); strings.Contains(s, ".env") || !strings.Contains(s, "README.md") {
				return fmt.Errorf("list %v", s)
			}
			return nil
		}},
	} {
		var res map[string]any
		err := c.p.call(c.method, c.params, &res)
		if c.code != 0 {
			wantCode(t, c.name, err, c.code)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.check != nil {
			if err := c.check(res); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(w.outside, "new.txt")); err == nil {
		t.Error("a write through a dangling link made a file out of the roots")
	}

	// Writes: folders made, append, journaled.
	var wr map[string]any
	if err := a.call("fs/write", map[string]any{"agent": "k1", "root": "agent", "path": "new/deep/f.txt", "text": "1"}, &wr); err != nil {
		t.Fatal(err)
	}
	if err := a.call("fs/write", map[string]any{"agent": "k1", "root": "agent", "path": "new/deep/f.txt", "text": "2", "append": true}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(w.work, "new", "deep", "f.txt")); err != nil || string(b) != "12" || wr["path"] != filepath.Join(w.work, "new", "deep", "f.txt") || wr["bytes"] != 1.0 {
		t.Errorf("written %q, %v; answered %v", b, err, wr)
	}
	if es := j.find("fsa", "fs/write"); len(es) < 2 || es[0].attrs["path"] != filepath.Join(w.work, "new", "deep", "f.txt") {
		t.Errorf("the writes were not journaled: %v", es)
	}

	// A list of more than 4096 entries is cut.
	var canon map[string]any
	if err := a.call("fs/canon", map[string]any{"root": "temp", "path": "."}, &canon); err != nil {
		t.Fatal(err)
	}
	tmp := canon["path"].(string)
	os.Mkdir(filepath.Join(tmp, "many"), 0o755)
	for i := range 4100 {
		os.WriteFile(filepath.Join(tmp, "many", fmt.Sprintf("f%04d", i)), nil, 0o644)
	}
	var ls struct {
		Entries   []map[string]any
		Truncated bool
	}
	if err := a.call("fs/list", map[string]any{"root": "temp", "path": "many"}, &ls); err != nil || len(ls.Entries) != 4096 || !ls.Truncated {
		t.Errorf("list of 4100: %d entries, truncated %v, %v", len(ls.Entries), ls.Truncated, err)
	}

	// The temporary folder goes with the plugin.
	if err := a.p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the temporary folder removed", func() bool { _, err := os.Stat(tmp); return os.IsNotExist(err) })
	v.need(t, "result:fs/read", "result:fs/write", "result:fs/stat", "result:fs/list", "result:fs/canon",
		"error:refused", "error:notFound", "error:failed", "error:invalidParams")
}
