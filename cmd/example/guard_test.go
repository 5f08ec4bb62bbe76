package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken/aci"
)

// TestDaemonGuard runs the daemon with the shipped guard (-allow agent
// -write): the allowed commands run, in every form, and hostile ones of
// each form leave a victim file whole.
func TestDaemonGuard(t *testing.T) {
	citest.NeedPrograms(t, agentPrograms...)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := build(t, dir, ".", "example")
	work, victim := filepath.Join(dir, "work"), filepath.Join(dir, "victim")
	os.Mkdir(work, 0o755)
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	d := start(t, bin, "-allow", "agent", "-write", work)
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
}
