package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken/aci"
)

// TestDaemonGuard runs the daemon as it runs by default, guarded by the
// shipped guard (with -write for the agent's folder), and with -plugins
// beside it: the allowed commands run, in every form; hostile ones of each
// form leave a victim file whole; and an action goes ahead only when the
// guard and the folder's plugin both allow it.
func TestDaemonGuard(t *testing.T) {
	citest.NeedPrograms(t, agentPrograms...)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := build(t, dir, ".", "example")
	plugins := filepath.Join(dir, "plugins")
	pdir := filepath.Join(plugins, "policy")
	os.MkdirAll(pdir, 0o755)
	build(t, pdir, "./testdata/policy", "policy")
	manifest, _ := os.ReadFile("testdata/policy/plugin.json")
	os.WriteFile(filepath.Join(pdir, "plugin.json"), manifest, 0o644)
	work, victim := filepath.Join(dir, "work"), filepath.Join(dir, "victim")
	os.Mkdir(work, 0o755)
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	d := start(t, bin, "-write", work, "-plugins", plugins)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := dial(t, ctx, d)
	defer c.Close()

	stdin := "b\na\n"
	for _, r := range []*aci.ExecRequest{
		{Argv: []string{"echo", "allowed"}},
		{Shell: "echo allowed | sort", Dir: work},
		{Argv: []string{"sort"}, Stdin: &stdin},
		{Argv: []string{"sort"}, Stdin: &stdin, Env: map[string]string{"LC_ALL": "C"}},
		{Shell: "echo x > out.txt && cat out.txt", Dir: work},
	} {
		if _, err := c.Exec(ctx, r); err != nil {
			t.Errorf("%q %q: %v", r.Argv, r.Shell, err)
		}
	}
	hostile := "rm " + victim
	for _, r := range []*aci.ExecRequest{
		{Argv: []string{"rm", victim}},
		{Shell: "echo hi; " + hostile},
		{Shell: "env -S '" + hostile + "'"},
		{Shell: "find " + dir + " -name victim -delete"},
		{Argv: []string{"sh"}, Stdin: &hostile},
		{Argv: []string{"git", "status"}, Env: map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": hostile}},
	} {
		if _, err := c.Exec(ctx, r); !errors.Is(err, aci.ErrPermissionDenied) {
			t.Errorf("%q %q: %v, want a refusal", r.Argv, r.Shell, err)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Errorf("the victim: %q %v", b, err)
	}

	// The plugin narrows what the guard allows (it refuses "forbidden"),
	// and cannot widen it (it allows uname, which the guard does not).
	for _, tc := range []struct {
		req    *aci.ExecRequest
		detail string
	}{
		{&aci.ExecRequest{Argv: []string{"echo", "forbidden"}}, "nothing forbidden"},
		{&aci.ExecRequest{Argv: []string{"uname"}}, "uname"},
	} {
		_, err := c.Exec(ctx, tc.req)
		var e *aci.Error
		if !errors.As(err, &e) || e.Code != aci.CodePermissionDenied || !strings.Contains(e.Detail, tc.detail) {
			t.Errorf("%q: %v, want a refusal saying %q", tc.req.Argv, err, tc.detail)
		}
	}
	c.Close()
	d.stop(t)
	if !strings.Contains(d.stderr.String(), "the shipped guard judges") {
		t.Errorf("the daemon did not say at start that the guard judges:\n%s", d.stderr)
	}
}

// TestGuardFlags checks the guard's flags that the daemon refuses
// together, and that it warns loudly when the guard is off.
func TestGuardFlags(t *testing.T) {
	for _, tc := range []struct {
		cfg config
		ok  bool
	}{
		{config{allow: "agent"}, true},
		{config{allow: "git,ls", allowSet: true, write: []string{"w"}}, true},
		{config{noGuard: true}, true},
		{config{noGuard: true, plugins: "p"}, true},
		{config{noGuard: true, allowSet: true}, false},
		{config{noGuard: true, write: []string{"w"}}, false},
		{config{noGuard: true, read: []string{"r"}}, false},
		{config{mcp: "stdio", remote: "ws://h/aci"}, true},
		{config{mcp: "stdio", remote: "ws://h/aci", allowSet: true}, false},
		{config{mcp: "stdio", remote: "ws://h/aci", write: []string{"w"}}, false},
	} {
		if err := checkGuardFlags(tc.cfg); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.cfg, err)
		}
	}
	for _, plugins := range []string{"", "p"} {
		var log strings.Builder
		p, err := pluginsFor(config{noGuard: true, plugins: plugins}, slog.New(slog.NewTextHandler(&log, nil)))
		if err != nil || (p == nil) != (plugins == "") {
			t.Errorf("-no-guard -plugins %q: %+v %v", plugins, p, err)
		}
		if p != nil && len(p.Go) != 0 {
			t.Errorf("-no-guard -plugins %q: the guard runs", plugins)
		}
		if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "the shipped guard is OFF") {
			t.Errorf("-no-guard -plugins %q: no warning: %s", plugins, log.String())
		}
	}
}
