package escouade_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/plugin/plugintest"
	"shinken.dev/go/escouade/protocol"
)

// A plugin receives the facts it listed, from the projects where it is on.
func Example() {
	ctx := context.Background()
	h := escouade.New(&escouade.Options{
		Journal: slog.DiscardHandler,
		Secrets: escouade.SecretMap{},
		Projects: escouade.ProjectMap{
			"shop": {Project: protocol.Project{ID: "shop", Name: "Shop"}},
		},
	})
	defer h.Close(ctx)

	m, err := manifest.Parse([]byte(`{
		"id": "notifier", "version": "1.0.0", "protocolVersion": 1,
		"run": {"command": ["notifier"]},
		"permissions": {"events": ["ticket.column"]}
	}`))
	if err != nil {
		panic(err)
	}
	got := make(chan protocol.Fact)
	_, err = plugintest.Connect(ctx, h, m, "", plugin.Handlers{
		Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) { got <- f },
	})
	if err != nil {
		panic(err)
	}

	h.Fact(ctx, "ticket.column", map[string]string{"from": "todo", "to": "done"}, escouade.About{
		Project: "shop",
		Ticket:  &protocol.Ticket{ID: "t1", Key: "SHOP-7", Title: "Refunds"},
	})
	f := <-got
	fmt.Println(f.Seq, f.Name, f.Project.Name, f.Ticket.Key, string(f.Data))
	// Output: 1 ticket.column Shop SHOP-7 {"from":"todo","to":"done"}
}

// Every plugin with permissions.decide is asked; a deny wins.
func ExampleHost_Decide() {
	ctx := context.Background()
	h := escouade.New(&escouade.Options{
		Journal:  slog.DiscardHandler,
		Secrets:  escouade.SecretMap{},
		Projects: escouade.ProjectMap{"shop": {Project: protocol.Project{ID: "shop", Name: "Shop"}}},
	})
	defer h.Close(ctx)

	guard := plugin.Handlers{
		Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
			if argv, _ := p.Request.Input["argv"].([]any); len(argv) > 0 && argv[0] == "rm" {
				return protocol.Decision{Verdict: protocol.Deny, Message: "nothing is removed in " + p.Project.Name}, nil
			}
			return protocol.Decision{Verdict: protocol.Allow}, nil
		},
	}
	m, _ := manifest.Parse([]byte(`{"id": "guard", "version": "1.0.0", "protocolVersion": 1,
		"run": {"command": ["guard"]}, "permissions": {"decide": true}}`))
	if _, err := plugintest.Connect(ctx, h, m, "", guard); err != nil {
		panic(err)
	}

	for _, argv := range [][]string{{"ls", "-l"}, {"rm", "-rf", "/"}} {
		d, err := h.Decide(ctx, protocol.PermissionRequest{
			ID: "r-" + argv[0], Kind: "command", Tool: "exec", Input: map[string]any{"argv": argv},
		}, escouade.About{Project: "shop"})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s %q (%s)\n", strings.Join(argv, " "), d.Verdict, d.Message, d.Plugin)
	}
	// Output:
	// ls -l: allow "" (guard)
	// rm -rf /: deny "nothing is removed in Shop" (guard)
}

// A plugin written in Go can run inside the program that links the Host,
// with no process: StartFunc runs plugin.Serve over in-memory pipes, and
// gives it the lifecycle of a command plugin (shutdown, restart within the
// crash budget). This is the way to ship one with a daemon;
// plugintest.Connect is the same for tests.
func ExampleHost_StartFunc() {
	ctx := context.Background()
	h := escouade.New(&escouade.Options{Journal: slog.DiscardHandler})
	defer h.Close(ctx)

	m, err := manifest.Parse([]byte(`{
		"id": "no-force-push", "version": "1.0.0", "protocolVersion": 1,
		"run": {"command": ["builtin"]},
		"permissions": {"decide": true}
	}`))
	if err != nil {
		panic(err)
	}
	guard := plugin.Handlers{Decide: func(_ context.Context, _ *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
		if command, _ := p.Request.Input["command"].(string); strings.HasPrefix(command, "git push --force") {
			return protocol.Decision{Verdict: protocol.Deny, Message: "no force push"}, nil
		}
		return protocol.Decision{Verdict: protocol.Allow}, nil
	}}
	_, err = h.StartFunc(ctx, m, "", func(ctx context.Context, in io.Reader, out io.Writer) error {
		return plugin.Serve(ctx, in, out, guard)
	})
	if err != nil {
		panic(err)
	}
	for _, command := range []string{"git push", "git push --force"} {
		d, err := h.Decide(ctx, protocol.PermissionRequest{ID: command, Kind: "command", Input: map[string]any{"command": command}},
			escouade.About{Project: escouade.DefaultProject})
		fmt.Println(command+":", d.Verdict, d.Message, err)
	}
	// Output:
	// git push: allow  <nil>
	// git push --force: deny no force push <nil>
}
