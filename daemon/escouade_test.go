package daemon

// Every use of package escouade by the daemon's tests (but the package
// example's) is in this file.

import (
	"context"
	"errors"
	"testing"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

// testPlugin is a Go plugin with the manifest of a guard named id.
func testPlugin(t testing.TB, id string, hs plugin.Handlers) GoPlugin {
	t.Helper()
	m, err := manifest.Parse([]byte(`{"id": "` + id + `", "version": "1.0.0", "protocolVersion": 1,
		"run": {"command": ["` + id + `"]}, "permissions": {"decide": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return GoPlugin{Manifest: m, Handlers: hs}
}

// allowingPlugin allows everything, and calls shutdown at its shutdown.
func allowingPlugin(t testing.TB, shutdown func()) GoPlugin {
	return testPlugin(t, "allowing", plugin.Handlers{
		Decide: func(context.Context, *plugin.Conn, protocol.DecideParams) (protocol.Decision, error) {
			return protocol.Decision{Verdict: protocol.Allow}, nil
		},
		Shutdown: func(context.Context, *plugin.Conn) error { shutdown(); return nil },
	})
}

// failingPlugin does not start: its initialize fails.
func failingPlugin(t testing.TB) GoPlugin {
	return testPlugin(t, "broken", plugin.Handlers{
		Initialize: func(context.Context, *plugin.Conn, protocol.InitializeParams) (map[string]any, error) {
			return nil, errors.New("this plugin does not start")
		},
	})
}

// unknownProject is a Plugins whose Host knows no project named Project.
func unknownProject() *Plugins {
	return &Plugins{Project: "web", Host: &escouade.Options{Projects: escouade.ProjectMap{}}}
}
