package manifest_test

import (
	"errors"
	"path"
	"strings"
	"testing"

	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

// FuzzParse feeds plugin.json to Parse: it never panics,
// every refusal is a FieldError or a join of them, and what it accepts
// holds the rules the fences rely on (the plugin's folder read only, no
// program that leaves the folder, no variable that is never set). The
// seed corpus is testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"p","version":"1.0.0","protocolVersion":1,"run":{"command":["bin/p"]},"name":"P","author":{"name":"Ada"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := manifest.Parse(data)
		if err != nil {
			var fe *protocol.FieldError
			if !errors.As(err, &fe) && !strings.Contains(err.Error(), "escouade: ") {
				t.Fatalf("a refusal that names no field: %v", err)
			}
			return
		}
		if m.Permissions.Files["plugin"] == manifest.AccessWrite {
			t.Fatal("the plugin's folder written")
		}
		for _, argv := range [][]string{m.Run.Command, sharedCommand(m)} {
			if len(argv) == 0 || !strings.Contains(argv[0], "/") || path.IsAbs(argv[0]) {
				continue
			}
			if c := path.Clean(argv[0]); c == ".." || strings.HasPrefix(c, "../") {
				t.Fatalf("a program out of the folder: %q", argv[0])
			}
		}
		for _, k := range m.Permissions.Env {
			u := strings.ToUpper(k)
			if u == "PATH" || strings.HasPrefix(u, "LD_") || strings.HasPrefix(u, "DYLD_") || strings.HasPrefix(u, "ESCOUADE_") {
				t.Fatalf("env %q accepted", k)
			}
		}
	})
}

func sharedCommand(m *manifest.Manifest) []string {
	if m.Launch.Shared == nil {
		return nil
	}
	return m.Launch.Shared.Command
}
