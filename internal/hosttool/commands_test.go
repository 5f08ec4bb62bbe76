package hosttool_test

import (
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/internal/hosttool"
)

const cmdDir = "/tmp/shinken-cmd.AbCd1234"

// TestCommandIntents reads the background commands' plumbing back as
// what it does (a start as its line or argv, input as a line, the rest as
// control), refuses arguments that do not fit it, and holds only a start
// past the exec limit.
func TestCommandIntents(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		want hosttool.Intent
	}{
		{"start line", hosttool.CommandStart.Argv("524288", "line", "make -j2 && ./run"), hosttool.Intent{Kind: "command", Line: "make -j2 && ./run"}},
		{"start argv", hosttool.CommandStart.Argv("524288", "argv", "/usr/bin/python3", "-m", "http.server"), hosttool.Intent{Kind: "command", Argv: []string{"/usr/bin/python3", "-m", "http.server"}}},
		{"input", hosttool.CommandInput.Argv(cmdDir, "print(1)\n"), hosttool.Intent{Kind: "command", Line: "print(1)\n"}},
		{"read", hosttool.CommandRead.Argv(cmdDir, "0", "16384"), hosttool.Intent{Kind: hosttool.KindControl}},
		{"list", hosttool.CommandList.Argv(), hosttool.Intent{Kind: hosttool.KindControl}},
		{"kill", hosttool.CommandControl.Argv(cmdDir, "kill"), hosttool.Intent{Kind: hosttool.KindControl}},
		{"eof", hosttool.CommandControl.Argv(cmdDir, "eof"), hosttool.Intent{Kind: hosttool.KindControl}},
		{"remove", hosttool.CommandControl.Argv(cmdDir, "remove"), hosttool.Intent{Kind: hosttool.KindControl}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, ok, err := hosttool.Recognize(tc.argv, nil, nil)
			if !ok || err != nil || in.Tool != hosttool.ToolCommands || in.Kind != tc.want.Kind || in.Line != tc.want.Line || !slices.Equal(in.Argv, tc.want.Argv) || in.Interactive {
				t.Fatalf("%+v, %v, %v; want %+v", in, ok, err, tc.want)
			}
			if _, ok, _ := hosttool.Recognize(tc.argv, map[string]string{"SHELL": "/x"}, nil); ok {
				t.Error("recognized with an env")
			}
			if held := hosttool.Held(tc.argv, nil, nil); held != strings.HasPrefix(tc.name, "start") {
				t.Errorf("held %v", held)
			}
			if hosttool.Held(tc.argv, map[string]string{"SHELL": "/x"}, nil) {
				t.Error("held with an env")
			}
		})
	}
	for name, argv := range map[string][]string{
		"tiny chunk":        hosttool.CommandStart.Argv("10", "line", "ls"),
		"huge chunk":        hosttool.CommandStart.Argv("999999999999", "line", "ls"),
		"no mode":           hosttool.CommandStart.Argv("524288", "exec", "ls"),
		"blank line":        hosttool.CommandStart.Argv("524288", "line", " \n"),
		"two lines":         hosttool.CommandStart.Argv("524288", "line", "ls", "pwd"),
		"empty program":     hosttool.CommandStart.Argv("524288", "argv", ""),
		"nothing to run":    hosttool.CommandStart.Argv("524288", "line"),
		"long line":         hosttool.CommandStart.Argv("524288", "line", strings.Repeat("x", hosttool.MaxTyped+1)),
		"not a command dir": hosttool.CommandInput.Argv("/tmp/shinken-shell.AbCd1234", "x"),
		"dir escape":        hosttool.CommandRead.Argv(cmdDir+"/../x", "0", "1"),
		"empty input":       hosttool.CommandInput.Argv(cmdDir, ""),
		"negative offset":   hosttool.CommandRead.Argv(cmdDir, "-1", "1"),
		"huge read":         hosttool.CommandRead.Argv(cmdDir, "0", "99999999"),
		"list with args":    hosttool.CommandList.Argv("x"),
		"unknown word":      hosttool.CommandControl.Argv(cmdDir, "rm"),
	} {
		if _, ok, err := hosttool.Recognize(argv, nil, nil); !ok || err == nil {
			t.Errorf("%s: recognized %v, error %v; want a refusal", name, ok, err)
		}
	}
	stdin := "x"
	if _, _, err := hosttool.Recognize(hosttool.CommandInput.Argv(cmdDir, "ls"), nil, &stdin); err == nil {
		t.Error("input with stdin is accepted")
	}
}
