package gate_test

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// FuzzRequest reads any line, and any argv with an env variable and a
// stdin, as the gate does: it never panics, the request decodes as a
// command, and a line that does not parse as /bin/sh (dash, POSIX) reads
// it is dynamic. The seed corpus is testdata/fuzz/FuzzRequest.
func FuzzRequest(f *testing.F) {
	f.Add("PATH=/x git status > out 2>&1 | grep -v x", "env", "-S", "rm x", "BASH_ENV", "x", "rm x")
	f.Add("sh -c -- 'bash -c \"{r,}m x\"'", "find", ".", "-exec", "PATH", ".:/usr/bin", "")
	f.Add("alias ls='rm x'\nls", "sed", "s/a/b/e", "f", "HOME", "/tmp", "")
	f.Fuzz(func(t *testing.T, line, a0, a1, a2, key, value, stdin string) {
		shell := aci.Action{Shell: &line, Stdin: &stdin}
		argv := aci.Action{Argv: []string{a0, a1, a2}, Stdin: &stdin}
		if key != "" && !strings.ContainsAny(key, "=\x00") {
			argv.Env = map[string]string{key: value}
			shell.Env = argv.Env
		}
		for _, a := range []aci.Action{shell, argv} {
			req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &a}, "r")
			if err != nil {
				t.Fatal(err)
			}
			in, err := req.Command()
			if err != nil {
				t.Fatalf("%+v: %v", req.Input, err)
			}
			if a.Shell != nil {
				if _, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), ""); err != nil && !in.Dynamic {
					t.Errorf("%q does not parse (%v), and is not dynamic", line, err)
				}
			}
		}
	})
}
