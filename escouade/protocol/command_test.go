package protocol

import (
	"testing"
)

// TestCommandKeysAsWritten: a request's input is read with its keys as
// written, so that what a guard reads through Command is what the input's
// own keys say ("Argv" is not argv, as encoding/json would take it).
func TestCommandKeysAsWritten(t *testing.T) {
	r := &PermissionRequest{Kind: KindCommand, Input: map[string]any{
		"command": "ls", "Argv": []any{"rm", "-rf", "/"}, "later": 1,
	}}
	in, err := r.Command()
	if err != nil {
		t.Fatal(err)
	}
	if in.Command != "ls" || in.Argv != nil {
		t.Errorf("Command() = %q %q, want the input's own command and no argv", in.Command, in.Argv)
	}
}
