//go:build unix

package escouade_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

// swapper swaps name, in a loop until stop is called, between a plain
// file holding plain and a link to target, each swap one rename(2), as a
// hostile plugin (or whatever it started) would.
type swapper struct {
	stop func()
	done chan struct{}
}

func swap(t *testing.T, name, plain, target string) *swapper {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &swapper{done: make(chan struct{})}
	s.stop = func() { cancel(); <-s.done }
	t.Cleanup(s.stop)
	tmpFile, tmpLink := name+".swap-file", name+".swap-link"
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			os.WriteFile(tmpFile, []byte(plain), 0o644)
			os.Rename(tmpFile, name)
			os.Remove(tmpLink)
			os.Symlink(target, tmpLink)
			os.Rename(tmpLink, name)
		}
	}()
	return s
}

// TestHostileFilesReadSwap: files/read, asked 10,000 times while another
// process swaps the name between a plain file and a link to the plugin's
// .env, returns the plain file or a refusal, never the hidden file.
func TestHostileFilesReadSwap(t *testing.T) {
	v := newValidator(t)
	h, _ := newHost(t, nil)
	dir := writePlugin(t, "swapper", `"run":{"command":["x"]}`, map[string]string{".env": "SECRET=1", "data.txt": "plain"})
	outside := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(outside, []byte("KEY"), 0o600)
	hs, conns := capture()
	p, err := h.StartFunc(context.Background(), parseManifest(t, "swapper", ""), dir, v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
		return plugin.Serve(ctx, in, out, hs)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	c := <-conns
	ctx := context.Background()
	for _, target := range []string{".env", outside} {
		s := swap(t, filepath.Join(dir, "data.txt"), "plain", target)
		var plain, refused int
		for i := range 10000 {
			got, err := c.ReadFile(ctx, "data.txt")
			switch {
			case err == nil && got == "plain":
				plain++
			case err == nil:
				s.stop()
				t.Fatalf("read %d returned %q through a swapped link to %s", i, got, target)
			case errors.Is(err, protocol.ErrRefused), errors.Is(err, protocol.ErrNotFound):
				refused++
			default:
				s.stop()
				t.Fatalf("read %d: %v", i, err)
			}
		}
		s.stop()
		t.Logf("link to %s: %d plain, %d refused of 10000", filepath.Base(target), plain, refused)
	}
}

// TestHostileFsSwap: fs/read and fs/write under an agent's root, while
// the name is swapped between a file and a link to the agent's key (for a
// read) or to a file out of the roots (for a write): the key never
// leaks, the file out of the roots is never written.
func TestHostileFsSwap(t *testing.T) {
	w := newFsWorld(t)
	v := newValidator(t)
	h, _ := hookedHost(t, nil, v, &escouade.Options{
		Agents:   escouade.AgentMap{"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Roots: escouade.AgentRoots{Agent: w.work, Repo: w.repo, Home: w.home}, Project: "pub"}},
		Projects: escouade.ProjectMap{"pub": {Project: protocol.Project{ID: "pub", Name: "Pub"}, Root: w.repo}},
	})
	a := startLinePlugin(t, h, v, "fsa", `,"permissions":{"files":{"agent":"write","agentHome":"read"}}`, "")
	if err := a.p.Attach(context.Background(), "k1"); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(w.work, "swapped.txt")
	s := swap(t, name, "plain", filepath.Join(w.home, ".ssh", "id_rsa"))
	for i := range 3000 {
		var res map[string]any
		err := a.call("fs/read", map[string]any{"agent": "k1", "root": "agent", "path": "swapped.txt"}, &res)
		if err == nil && res["text"] != "plain" {
			s.stop()
			t.Fatalf("read %d returned %v through a swapped link", i, res)
		}
	}
	s.stop()
	victim := filepath.Join(w.outside, "authorized_keys")
	os.WriteFile(victim, []byte("keep"), 0o644)
	s = swap(t, name, "plain", victim)
	for range 3000 {
		a.call("fs/write", map[string]any{"agent": "k1", "root": "agent", "path": "swapped.txt", "text": "ssh-rsa evil", "append": true}, nil)
	}
	s.stop()
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("a write through a swapped link reached %s: %q", victim, b)
	}
}

// TestHostileLinksAndFIFOs: dangling and live links under a root written
// to, hard links in the plugin's folder, FIFOs wherever a plugin can make
// one: each refused or failed with the protocol's code, promptly, and the
// Host and another plugin carry on.
func TestHostileLinksAndFIFOs(t *testing.T) {
	w := newFsWorld(t)
	v := newValidator(t)
	h, _ := hookedHost(t, nil, v, &escouade.Options{
		Agents: escouade.AgentMap{"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Roots: escouade.AgentRoots{Agent: w.work, Repo: w.repo, Home: w.home}, Project: "pub"}},
		Projects: escouade.ProjectMap{
			"pub":    {Project: protocol.Project{ID: "pub", Name: "Pub"}, Root: w.repo},
			"secret": {Project: protocol.Project{ID: "secret", Name: "Secret", Private: true}, Root: filepath.Join(w.home, "secret-project"), Plugins: map[string]bool{"fsb": true}},
		},
	})
	dir := writePlugin(t, "fsa", `"run":{"js":"main.js"}`, map[string]string{"main.js": "", ".env": "X=1", "data.txt": "d"})
	os.Link(filepath.Join(dir, ".env"), filepath.Join(dir, "env-hard"))
	os.Link(filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(dir, "key-hard"))
	os.Link(filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(w.work, "key-hard"))
	syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644)
	os.Symlink("inside-new.txt", filepath.Join(w.work, "dangling-in"))
	os.Symlink(filepath.Join(w.work, "a.txt"), filepath.Join(w.work, "live-link"))
	a := startLinePlugin(t, h, v, "fsa", `,"permissions":{"files":{"plugin":"read","agent":"write","agentHome":"read"}}`, dir)
	b := startLinePlugin(t, h, v, "fsb", `,"permissions":{"files":{"agentHome":"read"}}`, "")
	for _, p := range []*escouade.Plugin{a.p, b.p} {
		if err := p.Attach(context.Background(), "k1"); err != nil {
			t.Fatal(err)
		}
	}
	type params = map[string]any
	for _, c := range []struct {
		name   string
		method string
		params params
		code   protocol.Code
	}{
		{"a write through a dangling link inside the root", "fs/write", params{"agent": "k1", "root": "agent", "path": "dangling-in", "text": "x"}, protocol.CodeRefused},
		{"a write through a live link", "fs/write", params{"agent": "k1", "root": "agent", "path": "live-link", "text": "x"}, protocol.CodeRefused},
		{"a hard link to .env", "fs/read", params{"root": "plugin", "path": "env-hard"}, protocol.CodeRefused},
		{"a hard link to a key", "fs/read", params{"root": "plugin", "path": "key-hard"}, protocol.CodeRefused},
		{"a hard link to a key under the agent", "fs/read", params{"agent": "k1", "root": "agent", "path": "key-hard"}, protocol.CodeRefused},
		{"a FIFO in the plugin's folder", "fs/read", params{"root": "plugin", "path": "pipe"}, protocol.CodeFailed},
		{"a FIFO under the agent", "fs/read", params{"agent": "k1", "root": "agent", "path": "fifo"}, protocol.CodeFailed},
		{"a FIFO written", "fs/write", params{"agent": "k1", "root": "agent", "path": "fifo", "text": "x"}, protocol.CodeFailed},
	} {
		start := time.Now()
		err := a.call(c.method, c.params, nil)
		wantCode(t, c.name, err, c.code)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: answered after %v", c.name, d)
		}
	}
	if _, err := os.Lstat(filepath.Join(w.work, "inside-new.txt")); err == nil {
		t.Error("a write through a dangling link made its target")
	}
	if b, _ := os.ReadFile(filepath.Join(w.work, "a.txt")); string(b) != "agent file" {
		t.Errorf("a write through a live link changed its target: %q", b)
	}
	// The answer names the file written.
	var wr map[string]any
	if err := a.call("fs/write", params{"agent": "k1", "path": filepath.Join(w.work, "named.txt"), "text": "n"}, &wr); err != nil || wr["path"] != filepath.Join(w.work, "named.txt") {
		t.Errorf("write answered %v, %v", wr, err)
	}
	// A private project is left out of listings for a plugin not on for
	// it, and listed for one that is.
	for _, c := range []struct {
		p    *linePlugin
		want bool
	}{{a, false}, {b, true}} {
		var ls map[string]any
		if err := c.p.call("fs/list", params{"agent": "k1", "root": "agentHome", "path": "."}, &ls); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(fmtEntries(ls), "secret-project"); got != c.want {
			t.Errorf("%s lists the private project: %v, want %v (%s)", c.p.p.ID(), got, c.want, fmtEntries(ls))
		}
	}
	// files/read of the FIFO and the hard links, by a command plugin's
	// method.
	hs, conns := capture()
	cdir := writePlugin(t, "cmdp", `"run":{"command":["x"]}`, map[string]string{".env": "S=1"})
	syscall.Mkfifo(filepath.Join(cdir, "pipe"), 0o644)
	os.Link(filepath.Join(cdir, ".env"), filepath.Join(cdir, "env-hard"))
	cp, err := h.StartFunc(context.Background(), parseManifest(t, "cmdp", ""), cdir, v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
		return plugin.Serve(ctx, in, out, hs)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop(context.Background())
	conn := <-conns
	for name, want := range map[string]error{"pipe": protocol.ErrNotFound, "env-hard": protocol.ErrRefused} {
		if _, err := conn.ReadFile(context.Background(), name); !errors.Is(err, want) {
			t.Errorf("files/read %s: %v, want %v", name, err, want)
		}
	}
	// A run.js that is a FIFO fails Start at once; the others run on.
	fdir := writePlugin(t, "fifojs", `"run":{"js":"run.js"}`, nil)
	syscall.Mkfifo(filepath.Join(fdir, "run.js"), 0o644)
	if _, err := h.Start(context.Background(), fdir); err == nil {
		t.Error("a FIFO as run.js started")
	}
	if err := a.call("fs/read", params{"root": "plugin", "path": "data.txt"}, nil); err != nil {
		t.Errorf("the other plugin after all this: %v", err)
	}
}

// TestHostileManifestWrites: a plugin whose folder, or another plugin's,
// lies under an agent's root it may write cannot reach a manifest or any
// code there, nor through the root plugin its own code.
func TestHostileManifestWrites(t *testing.T) {
	w := newFsWorld(t)
	v := newValidator(t)
	h, _ := hookedHost(t, nil, v, &escouade.Options{
		Agents:   escouade.AgentMap{"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Roots: escouade.AgentRoots{Agent: w.work}, Project: "pub"}},
		Projects: escouade.ProjectMap{"pub": {Project: protocol.Project{ID: "pub", Name: "Pub"}, Root: w.repo}},
	})
	// Plugin folders under the agent's folder: its own, another loaded
	// one, and one not loaded (it would be at the next start).
	mk := func(id string) string {
		d := filepath.Join(w.work, "plugins", id)
		os.MkdirAll(filepath.Join(d, "lib"), 0o755)
		os.WriteFile(filepath.Join(d, manifest.Name), []byte(`{"id":"`+id+`"}`), 0o644)
		os.WriteFile(filepath.Join(d, "main.js"), []byte("//"), 0o644)
		os.WriteFile(filepath.Join(d, "lib", "code.js"), []byte("//"), 0o644)
		return d
	}
	own, other := mk("self"), mk("other")
	mk("dormant")
	a := startLinePlugin(t, h, v, "self", `,"permissions":{"files":{"agent":"write","plugin":"read"}}`, own)
	startLinePlugin(t, h, v, "other", ``, other)
	if err := a.p.Attach(context.Background(), "k1"); err != nil {
		t.Fatal(err)
	}
	type params = map[string]any
	for _, path := range []string{
		"plugins/self/plugin.json", "plugins/self/main.js", "plugins/self/lib/code.js", "plugins/self/new.js",
		"plugins/other/plugin.json", "plugins/other/lib/code.js", "plugins/other/new.js",
		"plugins/dormant/plugin.json", "plugins/dormant/lib/code.js",
		"plugins/other/PLUGIN.JSON",
	} {
		err := a.call("fs/write", params{"agent": "k1", "root": "agent", "path": path, "text": `{"commands":["sh *"]}`}, nil)
		wantCode(t, "fs/write "+path, err, protocol.CodeRefused)
		// The plugin reads its own folder (its root plugin), but for its
		// manifest; nothing of another plugin's.
		if !strings.HasPrefix(path, "plugins/self/") || strings.HasSuffix(path, "plugin.json") {
			err := a.call("fs/read", params{"agent": "k1", "root": "agent", "path": path}, nil)
			wantCode(t, "fs/read "+path, err, protocol.CodeRefused)
		}
	}
	if _, err := manifest.Parse([]byte(`{"id":"w","version":"1.0.0","protocolVersion":1,"run":{"js":"main.js"},"permissions":{"files":{"plugin":"write"}}}`)); err == nil {
		t.Error("a manifest that writes its own folder was accepted")
	}
	if b, _ := os.ReadFile(filepath.Join(other, manifest.Name)); string(b) != `{"id":"other"}` {
		t.Errorf("another plugin's manifest was written: %s", b)
	}
	// Nor is a new plugin made by writing a manifest anywhere.
	for _, path := range []string{"newplugin/plugin.json", "newplugin/Plugin.JSON", "plugin.json"} {
		err := a.call("fs/write", params{"agent": "k1", "root": "agent", "path": path, "text": `{"id":"evil"}`}, nil)
		wantCode(t, "fs/write "+path, err, protocol.CodeRefused)
	}
	if err := a.call("fs/write", params{"agent": "k1", "root": "agent", "path": "plugins-notes.txt", "text": "fine"}, nil); err != nil {
		t.Errorf("a plain write beside the plugins: %v", err)
	}
	// A folder named plugin.json would make the agent's folder look like a
	// plugin's to the fences, which would then refuse it to every plugin.
	for _, path := range []string{"plugin.json/x", "sub/Plugin.Json/x/y"} {
		err := a.call("fs/write", params{"agent": "k1", "root": "agent", "path": path, "text": "x"}, nil)
		wantCode(t, "fs/write "+path, err, protocol.CodeRefused)
	}
	if _, err := os.Stat(filepath.Join(w.work, manifest.Name)); err == nil {
		t.Error("a folder named plugin.json was made")
	}
	if err := a.call("fs/list", params{"agent": "k1", "root": "agent", "path": "."}, nil); err != nil {
		t.Errorf("the agent's folder is no longer listed: %v", err)
	}
}

func fmtEntries(ls map[string]any) string {
	var names []string
	for _, e := range ls["entries"].([]any) {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	return strings.Join(names, ",")
}

// TestHostileEnvInjection: every variable that makes git, bash, node,
// python, perl or make run something is refused, by an allowlist (no
// plugin names them in permissions.env), and a program started with no
// agent's environment gets a minimal one: not the daemon's token, not
// ESCOUADE_*, not the Host's other variables.
func TestHostileEnvInjection(t *testing.T) {
	t.Setenv("SHINKEN_TOKEN", "the-daemon-token")
	t.Setenv("ESCOUADE_SECRET", "hush")
	v := newValidator(t)
	h, _, _, _ := procHost(t)
	lp := startLinePlugin(t, h, v, "inj", `,"permissions":{"commands":["git status","env","sh -c *"],"env":["MY_FLAG"]}`, "")
	if err := lp.p.Attach(context.Background(), "k1"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_PARAMETERS", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
		"BASH_ENV", "ENV", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PERL5OPT", "PERL5LIB", "MAKEFILES", "SHELLOPTS",
		"LD_PRELOAD", "PATH", "Path", "ESCOUADE_TOKEN", "IFS", "PS4",
	} {
		err := lp.call("proc/spawn", map[string]any{"command": "git", "args": []string{"status"}, "agent": "k1", "env": map[string]any{k: "touch /tmp/pwned"}}, nil)
		wantCode(t, "env "+k, err, protocol.CodeRefused)
	}
	// A locale's name that is a path makes gettext load a catalog the
	// plugin wrote; a TZ that is one reads a file.
	for k, val := range map[string]string{"LANGUAGE": "../../../tmp/x", "LC_MESSAGES": "/tmp/x", "LANG": "fr_FR/../../x", "TZ": "/tmp/zone"} {
		err := lp.call("proc/spawn", map[string]any{"command": "env", "env": map[string]any{k: val}}, nil)
		wantCode(t, "env "+k+"="+val, err, protocol.CodeRefused)
	}
	out, _ := lp.run(t, map[string]any{"command": "env", "env": map[string]any{"MY_FLAG": "1", "LANG": "C.UTF-8", "LANGUAGE": "fr_FR:en", "TZ": "Europe/Paris"}})
	for _, bad := range []string{"SHINKEN_TOKEN", "the-daemon-token", "ESCOUADE_", "GORACE"} {
		if strings.Contains(out, bad) {
			t.Errorf("a program without an agent's environment got %s:\n%s", bad, out)
		}
	}
	for _, want := range []string{"MY_FLAG=1", "LANG=C.UTF-8", "PATH="} {
		if !strings.Contains(out, want) {
			t.Errorf("the program's environment lacks %s:\n%s", want, out)
		}
	}
}

// TestHostileCommandEnv: a command plugin gets a minimal environment and
// the variables its permissions.env names, never the Host's tokens or
// ESCOUADE_*, whatever it names.
func TestHostileCommandEnv(t *testing.T) {
	t.Setenv("SHINKEN_TOKEN", "the-daemon-token")
	t.Setenv("ESCOUADE_SECRET", "hush")
	t.Setenv("GITHUB_TOKEN", "ghp_secret")
	t.Setenv("NODE_OPTIONS", "--require /tmp/pwn.js")
	t.Setenv("PLUGIN_REGION", "eu-west")
	t.Setenv("LANG", "C.UTF-8")
	v := newValidator(t)
	withTranscript(t, v)
	h, _ := newHost(t, nil)
	dump := filepath.Join(t.TempDir(), "env")
	p := startCommand(t, h, v, "envdump", `,"permissions":{"env":["PLUGIN_REGION"]}`, "envdump", dump)
	defer p.Stop(context.Background())
	var env []string
	waitFor(t, "the plugin's environment", func() bool {
		b, err := os.ReadFile(dump)
		env = strings.Split(string(b), "\n")
		return err == nil && len(b) > 0
	})
	got := map[string]string{}
	for _, kv := range env {
		k, val, _ := strings.Cut(kv, "=")
		got[k] = val
	}
	for _, bad := range []string{"SHINKEN_TOKEN", "ESCOUADE_SECRET", "GITHUB_TOKEN", "NODE_OPTIONS"} {
		if _, ok := got[bad]; ok {
			t.Errorf("the command plugin got %s", bad)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "ESCOUADE_") {
			t.Errorf("the command plugin got %s", k)
		}
	}
	for k, want := range map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "LANG": "C.UTF-8", "PLUGIN_REGION": "eu-west"} {
		if got[k] != want {
			t.Errorf("the command plugin's %s = %q, want %q", k, got[k], want)
		}
	}
	// A manifest may not name what is never passed.
	for _, k := range []string{"ESCOUADE_SECRET", "LD_PRELOAD", "PATH", "SHINKEN_TOKEN"} {
		if _, err := manifest.Parse([]byte(`{"id":"x","version":"1.0.0","protocolVersion":1,"run":{"command":["x"]},"permissions":{"env":["` + k + `"]}}`)); err == nil {
			t.Errorf("a manifest naming %s in permissions.env was accepted", k)
		}
	}
}

// TestHostileFIFOsTheHostReads: a FIFO as a plugin's manifest, or as a
// project's .escouade.yml, is answered at once: Start fails, settings/get
// answers, the Host goes on.
func TestHostileFIFOsTheHostReads(t *testing.T) {
	v := newValidator(t)
	root := t.TempDir()
	syscall.Mkfifo(filepath.Join(root, ".escouade.yml"), 0o644)
	h, _ := newHost(t, &escouade.Options{
		Projects: escouade.ProjectMap{"fifo": {Project: protocol.Project{ID: "fifo", Name: "F"}, Root: root}},
	})
	dir := filepath.Join(t.TempDir(), "m")
	os.Mkdir(dir, 0o755)
	syscall.Mkfifo(filepath.Join(dir, manifest.Name), 0o644)
	if _, err := h.Start(context.Background(), dir); err == nil {
		t.Error("a FIFO as the manifest started")
	}
	// manifest.Read opens it non-blocking, and refuses it for what it is.
	if _, err := manifest.Read(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("manifest.Read of a FIFO: %v", err)
	}
	// Discovery leaves it out, and StartAll starts the others.
	parent := filepath.Dir(dir)
	good := filepath.Join(parent, "good")
	os.Mkdir(good, 0o755)
	os.WriteFile(filepath.Join(good, manifest.Name), []byte(`{"id":"good-one","version":"1.0.0","protocolVersion":1,`+commandManifest("good")+`}`), 0o644)
	if dirs, err := manifest.Find(parent); err != nil || len(dirs) != 1 || dirs[0] != good {
		t.Errorf("manifest.Find = %v, %v", dirs, err)
	}
	started, errs := h.StartAll(context.Background(), []string{dir, good})
	if len(started) != 1 || started[0].ID() != "good-one" || len(errs) != 1 {
		t.Errorf("StartAll of a FIFO's folder and a good one: %v, %v", started, errs)
	}
	for _, p := range started {
		p.Stop(context.Background())
	}
	hs, conns := capture()
	connect(t, h, v, "s", `,"contributes":{"settings":{"color":{"type":"string","default":"green"}}}`, "", hs)
	c := <-conns
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Settings(ctx, "fifo"); err == nil || ctx.Err() != nil {
		t.Errorf("settings/get of a project whose .escouade.yml is a FIFO: %v (%v)", err, ctx.Err())
	}
}
