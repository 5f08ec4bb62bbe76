package hosttool_test

import (
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/internal/hosttool"
)

const dir = "/tmp/shinken-shell.AbCd1234"

// TestShellIntents reads the shell's plumbing back as what it does, and
// refuses arguments that do not fit it, or an env that could change it.
func TestShellIntents(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		want hosttool.Intent
	}{
		{"start", hosttool.ShellStart.Argv("/bin/bash", "80", "24", "0123456789abcdef"), hosttool.Intent{Tool: "shell", Kind: "command", Argv: []string{"/bin/bash"}, Interactive: true}},
		{"type", hosttool.ShellType.Argv(dir, "rm -rf x\n"), hosttool.Intent{Tool: "shell", Kind: "command", Line: "rm -rf x\n"}},
		{"line", hosttool.ShellLine.Argv(dir, "git status\n", "/home/u/repo"), hosttool.Intent{Tool: "shell", Kind: "command", Line: "git status\n", Dir: "/home/u/repo"}},
		{"cwd", hosttool.ShellControl.Argv(dir, "cwd", "", ""), hosttool.Intent{Tool: "shell", Kind: hosttool.KindControl}},
		{"interrupt", hosttool.ShellControl.Argv(dir, "int", "", ""), hosttool.Intent{Tool: "shell", Kind: hosttool.KindControl}},
		{"size", hosttool.ShellControl.Argv(dir, "size", "120", "40"), hosttool.Intent{Tool: "shell", Kind: hosttool.KindControl}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, ok, err := hosttool.Recognize(tc.argv, nil, nil)
			if !ok || err != nil || in.Tool != tc.want.Tool || in.Kind != tc.want.Kind || in.Line != tc.want.Line || in.Dir != tc.want.Dir || !slices.Equal(in.Argv, tc.want.Argv) || in.Interactive != tc.want.Interactive {
				t.Fatalf("%+v, %v, %v; want %+v", in, ok, err, tc.want)
			}
			if _, ok, _ := hosttool.Recognize(tc.argv, map[string]string{"ENV": "/x"}, nil); ok {
				t.Error("recognized with an env")
			}
		})
	}
	for name, argv := range map[string][]string{
		"relative shell":  hosttool.ShellStart.Argv("bash", "80", "24", "0123456789abcdef"),
		"tiny terminal":   hosttool.ShellStart.Argv("/bin/sh", "1", "24", "0123456789abcdef"),
		"short nonce":     hosttool.ShellStart.Argv("/bin/sh", "80", "24", "ab"),
		"extra argument":  hosttool.ShellStart.Argv("/bin/sh", "80", "24", "0123456789abcdef", "x"),
		"not a shell dir": hosttool.ShellType.Argv("/home/u/.ssh", "x"),
		"empty line":      hosttool.ShellType.Argv(dir, ""),
		"long line":       hosttool.ShellType.Argv(dir, strings.Repeat("x", hosttool.MaxTyped+1)),
		"unknown word":    hosttool.ShellControl.Argv(dir, "rm", "", ""),
		"line, no folder": hosttool.ShellLine.Argv(dir, "ls\n"),
		"line, relative":  hosttool.ShellLine.Argv(dir, "ls\n", "repo"),
		"line, unclean":   hosttool.ShellLine.Argv(dir, "ls\n", "/home/u/../root"),
		"line, empty dir": hosttool.ShellLine.Argv(dir, "ls\n", ""),
		"cwd with args":   hosttool.ShellControl.Argv(dir, "cwd", "/x", ""),
		"kill with args":  hosttool.ShellControl.Argv(dir, "kill", "1", ""),
		"size of words":   hosttool.ShellControl.Argv(dir, "size", "a", "b"),
	} {
		if _, ok, err := hosttool.Recognize(argv, nil, nil); !ok || err == nil {
			t.Errorf("%s: recognized %v, error %v; want a refusal", name, ok, err)
		}
	}
	stdin := "x"
	if _, _, err := hosttool.Recognize(hosttool.ShellType.Argv(dir, "ls"), nil, &stdin); err == nil {
		t.Error("a typed line with stdin is accepted")
	}
}

// FuzzRecognizeShell: no argument list makes Recognize panic, and a
// recognized shell intent is always one of its kinds.
func FuzzRecognizeShell(f *testing.F) {
	f.Add(dir, "int", "", "")
	f.Add(dir, "size", "80", "24")
	f.Add("/bin/bash", "80", "24", "0123456789abcdef")
	f.Add(dir, "ls\n", "", "")
	f.Add("524288", "line", "ls", "")
	f.Add(cmdDir, "0", "16384", "")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		for _, s := range []*hosttool.Script{hosttool.ShellStart, hosttool.ShellType, hosttool.ShellLine, hosttool.ShellControl, hosttool.CommandStart, hosttool.CommandInput, hosttool.CommandRead, hosttool.CommandList, hosttool.CommandControl} {
			for _, args := range [][]string{{}, {a, b}, {a, b, c}, {a, b, c, d}} {
				in, ok, err := hosttool.Recognize(s.Argv(args...), nil, nil)
				if !ok {
					t.Fatalf("%s not recognized", s.Tool)
				}
				if err == nil && in.Kind != hosttool.KindCommand && in.Kind != hosttool.KindControl {
					t.Fatalf("kind %q", in.Kind)
				}
			}
		}
	})
}
