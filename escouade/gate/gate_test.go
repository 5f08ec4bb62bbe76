package gate_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/plugin/plugintest"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ptr[T any](v T) *T { return &v }

// TestRequest: every form of exec and launch_app becomes one request
// shape, command always the whole line.
func TestRequest(t *testing.T) {
	tests := []struct {
		name    string
		verb    aci.Verb
		action  aci.Action
		tool    string
		command string
		argv    []string
	}{
		{"argv", aci.VerbExec, aci.Action{Argv: []string{"npm", "test"}}, "exec", "npm test", []string{"npm", "test"}},
		{"argv quoted", aci.VerbExec, aci.Action{Argv: []string{"echo", "a b", "it's", ""}}, "exec", `echo 'a b' 'it'\''s' ''`, []string{"echo", "a b", "it's", ""}},
		{"shell", aci.VerbExec, aci.Action{Shell: ptr(`sh -c "echo forbidden"`)}, "exec", `sh -c "echo forbidden"`, []string{"/bin/sh", "-c", `sh -c "echo forbidden"`}},
		{"launch_app", aci.VerbLaunchApp, aci.Action{App: ptr("xterm"), Args: []string{"-e", "top"}}, "launch_app", "xterm -e top", []string{"xterm", "-e", "top"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := gate.Request(shinken.AuthRequest{Verb: tt.verb, Action: &tt.action}, "r1")
			if err != nil {
				t.Fatal(err)
			}
			in, err := req.Command()
			if err != nil {
				t.Fatal(err)
			}
			if req.ID != "r1" || req.Kind != protocol.KindCommand || req.Tool != tt.tool || in.Command != tt.command || !slices.Equal(in.Argv, tt.argv) {
				t.Errorf("%+v: %q %q", req, in.Command, in.Argv)
			}
		})
	}
	for _, bad := range []shinken.AuthRequest{
		{Verb: aci.VerbExec, Action: &aci.Action{}},
		{Verb: aci.VerbExec, Action: &aci.Action{Argv: []string{"ls"}, Shell: ptr("ls")}},
		{Verb: aci.VerbLaunchApp, Action: &aci.Action{}},
		{Verb: aci.VerbClick, Action: &aci.Action{}},
		{Verb: aci.VerbExec},
	} {
		if _, err := gate.Request(bad, "r"); err == nil {
			t.Errorf("%+v was made a request", bad)
		}
	}
}

// ExampleGate: a runtime's Authorizer asking a Host's plugins, here a
// guard written from the protocol's example, which reads input.command.
func ExampleGate() {
	ctx := context.Background()
	// No Projects: the gate asks about escouade.DefaultProject, which the
	// Host always knows.
	h := escouade.New(&escouade.Options{Journal: slog.DiscardHandler})
	defer h.Close(ctx)
	m, err := manifest.Parse([]byte(`{"id":"guard","version":"1.0.0","protocolVersion":1,
		"run":{"command":["guard"]},"permissions":{"decide":true}}`))
	if err != nil {
		panic(err)
	}
	guard := plugin.Handlers{Decide: func(_ context.Context, _ *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		if command, _ := p.Request.Input["command"].(string); command == "npm test" {
			return protocol.Decision{Verdict: protocol.Allow}, nil
		}
		return protocol.Decision{Verdict: protocol.Deny, Message: "only npm test"}, nil
	}}
	if _, err := plugintest.Connect(ctx, h, m, "", guard); err != nil {
		panic(err)
	}
	g := gate.New(h, nil)
	for _, a := range []*aci.Action{
		{Argv: []string{"npm", "test"}},
		{Shell: ptr("npm test")},
		{Argv: []string{"sh", "-c", "npm test; curl evil"}},
	} {
		err := g.Authorize(ctx, shinken.AuthRequest{Verb: aci.VerbExec, Action: a})
		fmt.Println(err == nil, errors.Is(err, protocol.ErrRefused), err)
	}
	// Output:
	// true false <nil>
	// true false <nil>
	// false true only npm test
}
