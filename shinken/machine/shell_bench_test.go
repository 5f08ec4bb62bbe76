package machine_test

import (
	"context"
	"testing"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/machine"
)

// BenchmarkShellEcho is the shell's round trip for echo: type the line,
// wait for its output and its exit code; sh as is (/bin/sh, text typed
// as is) beside sh/lines (ShellOptions.Lines: the foreground and prompt
// checks, the folder's lock). BenchmarkExecEcho, beside it, is a plain
// exec of echo on the same runtime.
func BenchmarkShellEcho(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts *machine.ShellOptions
	}{
		{"bash", nil},
		{"sh", &machine.ShellOptions{Command: "/bin/sh"}},
		{"sh/lines", &machine.ShellOptions{Lines: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, _ := execRig(b)
			sh, err := c.StartShell(b.Context(), bc.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer sh.Close(context.WithoutCancel(b.Context()))
			for b.Loop() {
				res, err := sh.Run(b.Context(), "echo hi", nil)
				if err != nil || res.Output != "hi\n" || res.ExitCode == nil {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
}

func BenchmarkExecEcho(b *testing.B) {
	c, _ := execRig(b)
	for b.Loop() {
		res, err := c.Exec(b.Context(), &aci.ExecRequest{Argv: []string{"echo", "hi"}})
		if err != nil || res.Stdout != "hi\n" {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}
