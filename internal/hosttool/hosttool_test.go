package hosttool_test

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/internal/hosttool"
)

func ptr(s string) *string { return &s }

// TestRecognize reads each tool's plumbing back as what it does, and
// checks that nothing else passes for it: an exec that differs from the
// plumbing in env, argv[0], $0 or one byte of the script is no tool's
// (the runtime judges it as the plain exec it is), and the plumbing with
// arguments that do not fit it is an error (refused as invalid_action).
func TestRecognize(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("hello"))
	for _, tc := range []struct {
		s     *hosttool.Script
		args  []string
		stdin *string
		want  hosttool.Intent
	}{
		{hosttool.ReadFile, []string{"/home/a/f", "0", "524288"}, nil, hosttool.Intent{Tool: "read_file", Kind: "read", Path: "/home/a/f"}},
		{hosttool.WriteFile, []string{"replace", "/home/a/-f", "0"}, &b64, hosttool.Intent{Tool: "write_file", Kind: "edit", Path: "/home/a/-f"}},
		{hosttool.WriteFile, []string{"append", "/home/a/f", "0"}, ptr(""), hosttool.Intent{Tool: "write_file", Kind: "edit", Path: "/home/a/f"}},
		{hosttool.WriteFile, []string{"at", "/home/a/f", "1073741824"}, &b64, hosttool.Intent{Tool: "write_file", Kind: "edit", Path: "/home/a/f"}},
		{hosttool.ListFiles, []string{"/", "", "1000"}, nil, hosttool.Intent{Tool: "list_files", Kind: "read", Path: "/"}},
		{hosttool.ListFiles, []string{"/home/a", ".bashrc", "10000"}, nil, hosttool.Intent{Tool: "list_files", Kind: "read", Path: "/home/a"}},
		{hosttool.Stat, []string{"/home/a/f"}, nil, hosttool.Intent{Tool: "stat", Kind: "read", Path: "/home/a/f"}},
		{hosttool.Exists, []string{"/home/a/f"}, nil, hosttool.Intent{Tool: "exists", Kind: "read", Path: "/home/a/f"}},
		{hosttool.Mkdir, []string{"/home/a/d/e", "1"}, nil, hosttool.Intent{Tool: "mkdir", Kind: "edit", Path: "/home/a/d/e"}},
		{hosttool.Move, []string{"/home/a/f", "/home/a/g", "0"}, nil, hosttool.Intent{Tool: "move", Kind: "edit", Path: "/home/a/f", To: "/home/a/g"}},
		{hosttool.Delete, []string{"/home/a/d", "1"}, nil, hosttool.Intent{Tool: "delete", Kind: "edit", Path: "/home/a/d"}},
		{hosttool.Open, []string{"xdg-open", "https://example.com/"}, nil, hosttool.Intent{Tool: "open", Kind: "command", Argv: []string{"xdg-open", "https://example.com/"}, Dynamic: true}},
		{hosttool.Open, []string{"xdg-open", "/home/a/doc.pdf"}, nil, hosttool.Intent{Tool: "open", Kind: "command", Argv: []string{"xdg-open", "/home/a/doc.pdf"}, Dynamic: true}},
	} {
		t.Run(tc.want.Tool, func(t *testing.T) {
			argv := tc.s.Argv(tc.args...)
			in, ok, err := hosttool.Recognize(argv, nil, tc.stdin)
			if !ok || err != nil {
				t.Fatalf("Recognize(%q) = %v, %v", tc.args, ok, err)
			}
			if in.Tool != tc.want.Tool || in.Kind != tc.want.Kind || in.Path != tc.want.Path || in.To != tc.want.To ||
				!slices.Equal(in.Argv, tc.want.Argv) || in.Dynamic != tc.want.Dynamic || in.Line != "" {
				t.Fatalf("Recognize(%q) = %+v, want %+v", tc.args, in, tc.want)
			}
			// Not the plumbing: judged as the plain exec.
			for name, v := range map[string][]string{
				"argv[0] sh":     append([]string{"sh"}, argv[1:]...),
				"/bin/bash":      append([]string{"/bin/bash"}, argv[1:]...),
				"another $0":     append(slices.Clone(argv[:3]), append([]string{"sh"}, argv[4:]...)...),
				"a byte changed": append(append(slices.Clone(argv[:2]), argv[2]+" "), argv[3:]...),
				"-e before -c":   append([]string{"/bin/sh", "-e", "-c"}, argv[2:]...),
				"no $0":          argv[:3],
			} {
				if _, ok, _ := hosttool.Recognize(v, nil, tc.stdin); ok {
					t.Errorf("%s: recognized as %s", name, tc.want.Tool)
				}
			}
			for name, env := range map[string]map[string]string{
				"env":       {"PATH": "/tmp"},
				"empty env": {},
			} {
				if _, ok, _ := hosttool.Recognize(argv, env, tc.stdin); ok {
					t.Errorf("%s: recognized as %s", name, tc.want.Tool)
				}
			}
			// The plumbing with arguments that do not fit: an error.
			if _, ok, err := hosttool.Recognize(append(slices.Clone(argv), "extra"), nil, tc.stdin); !ok || err == nil {
				t.Errorf("an extra argument: ok %v, err %v", ok, err)
			}
			if _, ok, err := hosttool.Recognize(argv[:len(argv)-1], nil, tc.stdin); !ok || err == nil {
				t.Errorf("an argument short: ok %v, err %v", ok, err)
			}
		})
	}
}

// TestRecognizeRefusesWhatDoesNotFit lists arguments each tool refuses:
// a path that is not absolute and clean (the plugin would be shown one
// path and the script touch another), numbers out of their bounds or
// spelt oddly, flags other than 0 and 1, input where none is read, and
// contents that are not base64.
func TestRecognizeRefusesWhatDoesNotFit(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("x"))
	for _, tc := range []struct {
		name  string
		s     *hosttool.Script
		args  []string
		stdin *string
	}{
		{"empty path", hosttool.ReadFile, []string{"", "0", "1"}, nil},
		{"relative path", hosttool.ReadFile, []string{"f", "0", "1"}, nil},
		{"tilde", hosttool.Stat, []string{"~/f"}, nil},
		{"dot-dot", hosttool.Stat, []string{"/home/a/../../etc/passwd"}, nil},
		{"dot", hosttool.Stat, []string{"/home/./a"}, nil},
		{"double slash", hosttool.Exists, []string{"/home//a"}, nil},
		{"trailing slash", hosttool.ListFiles, []string{"/home/a/", "", "1"}, nil},
		{"NUL", hosttool.Stat, []string{"/home/a\x00b"}, nil},
		{"negative offset", hosttool.ReadFile, []string{"/f", "-1", "1"}, nil},
		{"plus offset", hosttool.ReadFile, []string{"/f", "+1", "1"}, nil},
		{"leading zero", hosttool.ReadFile, []string{"/f", "01", "1"}, nil},
		{"hex", hosttool.ReadFile, []string{"/f", "0x10", "1"}, nil},
		{"length over the chunk", hosttool.ReadFile, []string{"/f", "0", "524289"}, nil},
		{"read with stdin", hosttool.ReadFile, []string{"/f", "0", "1"}, &b64},
		{"limit 0", hosttool.ListFiles, []string{"/", "", "0"}, nil},
		{"limit over the page", hosttool.ListFiles, []string{"/", "", "10001"}, nil},
		{"cursor with a slash", hosttool.ListFiles, []string{"/", "a/b", "1"}, nil},
		{"cursor ..", hosttool.ListFiles, []string{"/", "..", "1"}, nil},
		{"write without stdin", hosttool.WriteFile, []string{"replace", "/f", "0"}, nil},
		{"write not base64", hosttool.WriteFile, []string{"replace", "/f", "0"}, ptr("rm -rf ~")},
		{"write unknown mode", hosttool.WriteFile, []string{"truncate", "/f", "0"}, &b64},
		{"replace at an offset", hosttool.WriteFile, []string{"replace", "/f", "5"}, &b64},
		{"append at an offset", hosttool.WriteFile, []string{"append", "/f", "5"}, &b64},
		{"mkdir flag", hosttool.Mkdir, []string{"/d", "yes"}, nil},
		{"delete flag", hosttool.Delete, []string{"/d", "-r"}, nil},
		{"delete the root", hosttool.Delete, []string{"/", "1"}, nil},
		{"move relative destination", hosttool.Move, []string{"/a", "b", "0"}, nil},
		{"move the root", hosttool.Move, []string{"/", "/b", "0"}, nil},
		{"open another program", hosttool.Open, []string{"rm", "/home/a/f"}, nil},
		{"open a path of a shell", hosttool.Open, []string{"/usr/bin/xdg-open", "/f"}, nil},
		{"open nothing", hosttool.Open, []string{"xdg-open", ""}, nil},
		{"open a relative path", hosttool.Open, []string{"xdg-open", "-f"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, ok, err := hosttool.Recognize(tc.s.Argv(tc.args...), nil, tc.stdin)
			if !ok || err == nil {
				t.Fatalf("Recognize(%q) = %+v, %v, %v: want an error", tc.args, in, ok, err)
			}
			if !strings.HasPrefix(err.Error(), tc.s.Tool+": ") {
				t.Errorf("the error %q does not name the tool", err)
			}
		})
	}
}
