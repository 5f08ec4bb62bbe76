package daemon

// Every use of package escouade by the daemon's tests (but the package
// example's) is in this file.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// testPlugin is a Go plugin with the manifest of a guard named id.
func testPlugin(t testing.TB, id string, hs plugin.Handlers) GoPlugin {
	t.Helper()
	m, err := manifest.Parse([]byte(`{"id": "` + id + `", "version": "1.0.0", "protocolVersion": 1,
		"run": {"command": ["` + id + `"]}, "permissions": {"decide": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return GoPlugin{Manifest: m, Handlers: hs}
}

// allowingPlugin allows everything, and calls shutdown at its shutdown.
func allowingPlugin(t testing.TB, shutdown func()) GoPlugin {
	return testPlugin(t, "allowing", plugin.Handlers{
		Decide: func(context.Context, *plugin.Conn, protocol.DecideParams) (protocol.Decision, error) {
			return protocol.Decision{Verdict: protocol.Allow}, nil
		},
		Shutdown: func(context.Context, *plugin.Conn) error { shutdown(); return nil },
	})
}

// failingPlugin does not start: its initialize fails.
func failingPlugin(t testing.TB) GoPlugin {
	return testPlugin(t, "broken", plugin.Handlers{
		Initialize: func(context.Context, *plugin.Conn, protocol.InitializeParams) (map[string]any, error) {
			return nil, errors.New("this plugin does not start")
		},
	})
}

// unknownProject is a Plugins whose Host knows no project named Project.
func unknownProject() *Plugins {
	return &Plugins{Project: "web", Host: &escouade.Options{Projects: escouade.ProjectMap{}}}
}

// TestAllowlistGuard: a daemon with the shipped guard as its plugin,
// configured for a realistic agent, driven by a real ACI client: hostile
// execs of every form (argv, shell lines of every class, a program on
// stdin, code through env) leave a victim file as it was, and the
// allowed commands still run, stdin and env included.
func TestAllowlistGuard(t *testing.T) {
	citest.NeedPrograms(t, "ls", "cat", "grep", "find", "git", "sed", "sort", "wc", "awk", "python3", "make", "head", "tail", "echo")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, victim := filepath.Join(dir, "work"), filepath.Join(dir, "victim")
	os.Mkdir(work, 0o755)
	const precious = "precious\n"
	os.WriteFile(victim, []byte(precious), 0o644)
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("b\na\n"), 0o644)
	g, err := guard.New(&guard.Policy{
		Allow: []string{"ls", "cat", "grep", "find", "git", "python3", "make", "echo", "sed", "head", "tail", "wc", "sort", "awk"},
		Write: []string{work},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, &Options{Token: "tok", Plugins: &Plugins{Go: []GoPlugin{testPlugin(t, "guard", plugin.Handlers{Decide: g.Decide})}}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, d.Endpoints()[0].ACI, &client.DialOptions{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	hostile := []*aci.ExecRequest{
		{Argv: []string{"rm", victim}},
		{Argv: []string{"sh", "-c", "rm " + victim}},
		{Argv: []string{"/bin/sh", "-c", "rm " + victim}},
		{Argv: []string{"find", dir, "-name", "victim", "-delete"}},
		{Argv: []string{"env", "-S", "rm " + victim}},
		{Argv: []string{"sed", "-i", "d", victim}},
		{Argv: []string{"git", "-c", "alias.x=!rm " + victim, "x"}},
		{Argv: []string{"sort", "-o", victim, "/dev/null"}},
		// A program on stdin.
		{Argv: []string{"sh"}, Stdin: ptr("rm " + victim)},
		{Argv: []string{"ed", "-s", victim}, Stdin: ptr("1,$d\nw\n")},
		{Argv: []string{"python3"}, Stdin: ptr("import os; os.remove(" + strconv.Quote(victim) + ")")},
		{Argv: []string{"awk", "-f", "/dev/stdin"}, Stdin: ptr(`BEGIN { system("rm ` + victim + `") }`)},
		{Argv: []string{"sed", "-f", "/dev/stdin", victim}, Stdin: ptr("e rm " + victim)},
		// Code through env.
		{Argv: []string{"git", "status"}, Dir: work, Env: map[string]string{"PATH": work + ":/usr/bin:/bin"}},
		{Argv: []string{"git", "status"}, Dir: work, Env: map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "rm " + victim}},
		{Argv: []string{"ls"}, Env: map[string]string{"LD_PRELOAD": filepath.Join(work, "x.so")}},
		{Argv: []string{"sh", "-c", "ls"}, Env: map[string]string{"ENV": victim, "BASH_ENV": victim}},
		{Shell: "ls", Env: map[string]string{"BASH_FUNC_ls%%": "() { rm " + victim + "; }"}},
	}
	lines, err := filepath.Glob("../escouade/guard/testdata/hostile/*.txt")
	if err != nil || len(lines) == 0 {
		t.Fatalf("the guard's hostile lines: %v", err)
	}
	for _, f := range append(lines, mustGlob(t, "../escouade/gate/testdata/hostile/*.txt")...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") || strings.HasSuffix(l, ",") || strings.HasPrefix(l, " ") {
				continue
			}
			l = strings.NewReplacer("{victim}", victim, "{dir}", dir).Replace(l)
			hostile = append(hostile, &aci.ExecRequest{Shell: l, Dir: dir})
		}
	}
	refused := 0
	for _, r := range hostile {
		_, err := c.Exec(ctx, r)
		if errors.Is(err, aci.ErrPermissionDenied) {
			refused++
		}
		if b, rerr := os.ReadFile(victim); rerr != nil || string(b) != precious {
			t.Errorf("%q %q (stdin %v, env %v) changed the victim: %v", r.Argv, r.Shell, r.Stdin != nil, r.Env, err)
			os.WriteFile(victim, []byte(precious), 0o644)
		}
	}
	t.Logf("%d hostile execs, %d refused, none touched the victim", len(hostile), refused)

	for _, tc := range []struct {
		req  *aci.ExecRequest
		want string
	}{
		{&aci.ExecRequest{Argv: []string{"ls", work}}, "notes.txt\n"},
		{&aci.ExecRequest{Shell: "cat notes.txt | sort | head -1", Dir: work}, "a\n"},
		{&aci.ExecRequest{Argv: []string{"sort"}, Stdin: ptr("b\na\n")}, "a\nb\n"},
		{&aci.ExecRequest{Argv: []string{"sort", "notes.txt"}, Dir: work, Env: map[string]string{"LC_ALL": "C"}}, "a\nb\n"},
		{&aci.ExecRequest{Shell: "echo hi > out.txt && cat out.txt", Dir: work}, "hi\n"},
		{&aci.ExecRequest{Shell: `sed -n 's/a/z/p' notes.txt; wc -l < notes.txt`, Dir: work}, "z\n2\n"},
		{&aci.ExecRequest{Shell: "find . -name '*.txt' | wc -l", Dir: work}, "2\n"},
	} {
		res, err := c.Exec(ctx, tc.req)
		if err != nil || res.Stdout != tc.want {
			t.Errorf("%q %q: %v, %+v, want %q", tc.req.Argv, tc.req.Shell, err, res, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
