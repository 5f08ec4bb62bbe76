//go:build linux

package osexec_test

import (
	"strings"
	"testing"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/shinken/aci"
)

// TestBaseEnvRunsNoShellCode: by default, the environment the executor
// inherits loses BASH_ENV, ENV and bash's exported functions, which
// would make a line run a file or a function no gate was shown; a
// request that sets them itself keeps them (the gate shows and judges
// them).
func TestBaseEnvRunsNoShellCode(t *testing.T) {
	t.Setenv("BASH_ENV", "/inherited/bash_env")
	t.Setenv("ENV", "/inherited/env")
	t.Setenv("BASH_FUNC_ls%%", "() { echo hijacked; }")
	t.Setenv("SHINKEN_KEPT", "1")
	e := osexec.New(nil)
	out := run(t, e, aci.ExecRequest{Argv: []string{"env"}})
	env := string(out.Stdout)
	for _, k := range []string{"BASH_ENV=", "\nENV=", "BASH_FUNC_"} {
		if strings.Contains("\n"+env, k) {
			t.Errorf("%s inherited:\n%s", strings.TrimSpace(k), env)
		}
	}
	if !strings.Contains(env, "SHINKEN_KEPT=1") {
		t.Errorf("the rest of the environment is lost:\n%s", env)
	}
	out = run(t, e, aci.ExecRequest{Argv: []string{"env"}, Env: map[string]string{"BASH_ENV": "/asked"}})
	if !strings.Contains(string(out.Stdout), "BASH_ENV=/asked") {
		t.Errorf("a request's own BASH_ENV is dropped:\n%s", out.Stdout)
	}
	// An environment given in Options is the embedder's, used as it is.
	e = osexec.New(&osexec.Options{Env: []string{"BASH_ENV=/given"}})
	out = run(t, e, aci.ExecRequest{Argv: []string{"/usr/bin/env"}})
	if !strings.Contains(string(out.Stdout), "BASH_ENV=/given") {
		t.Errorf("Options.Env's BASH_ENV is dropped:\n%s", out.Stdout)
	}
}
