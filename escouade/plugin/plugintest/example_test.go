package plugintest_test

import (
	"context"
	"fmt"
	"log/slog"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/plugin/plugintest"
	"shinken.dev/go/escouade/protocol"
)

// A plugin's test: a real Host with secrets and settings in memory, the
// plugin's handlers connected without a process.
func ExampleConnect() {
	ctx := context.Background()
	h := escouade.New(&escouade.Options{
		Journal:  slog.DiscardHandler,
		Secrets:  escouade.SecretMap{"greeter": {"token": "t0k"}},
		Settings: &escouade.FileSettings{User: map[string]map[string]any{"greeter": {"greeting": "Salut"}}},
	})
	defer h.Close(ctx)
	m, err := manifest.Parse([]byte(`{
		"id": "greeter", "version": "0.1.0", "protocolVersion": 1,
		"run": {"command": ["greeter"]},
		"permissions": {"events": ["agent.created"], "secrets": ["token"]},
		"contributes": {"settings": {
			"greeting": {"type": "string", "default": "Hello"},
			"loud": {"type": "boolean", "default": false}
		}}
	}`))
	if err != nil {
		panic(err)
	}

	said := make(chan string)
	greeter := plugin.Handlers{
		Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) {
			settings, err := c.Settings(ctx, "")
			if err != nil {
				said <- err.Error()
				return
			}
			token, _, _ := c.Secret(ctx, "token")
			_, _, err = c.Secret(ctx, "password")
			said <- fmt.Sprintf("%s, %s! (loud: %v, token: %s, password: %v)",
				settings["greeting"], f.Agent.Name, settings["loud"], token, err)
		},
	}
	if _, err := plugintest.Connect(ctx, h, m, "", greeter); err != nil {
		panic(err)
	}
	h.Fact(ctx, "agent.created", nil, escouade.About{Agent: &protocol.Agent{ID: "a1", Name: "Ada"}})
	fmt.Println(<-said)
	// Output: Salut, Ada! (loud: false, token: t0k, password: escouade: notYours: "password" is not a key of permissions.secrets (notYours))
}
