package hosttool_test

import (
	"path"
	"strings"
	"testing"

	"shinken.dev/go/internal/hosttool"
)

var fuzzScripts = []*hosttool.Script{hosttool.ReadFile, hosttool.WriteFile, hosttool.ListFiles, hosttool.Stat,
	hosttool.Exists, hosttool.Mkdir, hosttool.Move, hosttool.Delete, hosttool.Open}

// FuzzRecognize feeds each tool's plumbing arbitrary arguments (split on
// NUL) and standard input: Recognize never panics, and what it accepts is
// what the Intent says, a read or an edit of absolute clean paths, or
// open's opener.
func FuzzRecognize(f *testing.F) {
	f.Add(0, "/home/a/f\x000\x00524288", "", false)
	f.Add(1, "replace\x00/home/a/-f\x000", "aGVsbG8=", true)
	f.Add(1, "at\x00/f\x0065536", "eA==", true)
	f.Add(2, "/\x00.bashrc\x001000", "", false)
	f.Add(6, "/a\x00/b\x001", "", false)
	f.Add(7, "/home/a/../../etc\x001", "", false)
	f.Add(8, "xdg-open\x00https://example.com/", "", false)
	f.Add(8, "xdg-open\x00-x", "", false)
	f.Fuzz(func(t *testing.T, which int, args, stdin string, withStdin bool) {
		s := fuzzScripts[(which%len(fuzzScripts)+len(fuzzScripts))%len(fuzzScripts)]
		var in *string
		if withStdin {
			in = &stdin
		}
		intent, ok, err := hosttool.Recognize(s.Argv(strings.Split(args, "\x00")...), nil, in)
		if !ok {
			t.Fatalf("%s's plumbing not recognized", s.Tool)
		}
		if err != nil {
			return
		}
		if intent.Tool != s.Tool {
			t.Fatalf("%s recognized as %s", s.Tool, intent.Tool)
		}
		switch intent.Kind {
		case hosttool.KindRead, hosttool.KindEdit:
			for _, p := range []string{intent.Path, intent.To} {
				if p == "" && p == intent.To {
					continue
				}
				if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
					t.Fatalf("%s: an intent of path %q", s.Tool, p)
				}
			}
		case hosttool.KindCommand:
			if s != hosttool.Open || len(intent.Argv) != 2 || !intent.Dynamic {
				t.Fatalf("%s: a command %+v", s.Tool, intent)
			}
		default:
			t.Fatalf("%s: kind %q", s.Tool, intent.Kind)
		}
	})
}
