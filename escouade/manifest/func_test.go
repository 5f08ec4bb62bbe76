package manifest_test

import (
	"errors"
	"strings"
	"testing"

	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

// TestParseFunc: an in-process plugin's manifest needs no run, is refused
// one, and is otherwise held to Parse's rules, its problems named by path.
func TestParseFunc(t *testing.T) {
	m, err := manifest.ParseFunc([]byte(` {"id": "no-rm", "version": "1.0.0", "protocolVersion": 1,
		"permissions": {"decide": true}} `))
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "no-rm" || !m.Permissions.Decide || m.Run.Command != nil {
		t.Errorf("ParseFunc: %+v", m)
	}
	for _, tc := range []struct{ manifest, path string }{
		{`{"id": "p", "version": "1.0.0", "protocolVersion": 1, "run": {"command": ["x"]}}`, "run"},
		{`{"id": "p", "version": "1.0.0", "protocolVersion": 1, "permissions": {"decide": 1}}`, "permissions.decide"},
		{`{"id": "p", "protocolVersion": 1}`, "version"},
		{`{}`, "id"},
		{`[]`, ""},
		{`{"id": "p", "id": "q"}`, ""},
	} {
		_, err := manifest.ParseFunc([]byte(tc.manifest))
		var fe *protocol.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a FieldError", tc.manifest, err)
			continue
		}
		if tc.path != "" && !strings.Contains(err.Error(), tc.path+":") {
			t.Errorf("%s: %v, want it to name %s", tc.manifest, err, tc.path)
		}
		if strings.Contains(err.Error(), "in-process\"") || tc.path != "run" && strings.Contains(err.Error(), "run") {
			t.Errorf("%s: %v names the run it never had", tc.manifest, err)
		}
	}
}
