// Command policy is a test Escouade plugin written from the protocol's own
// example of a request's input ({command: 'npm test'}): it reads only
// input.command, denies commands that delete files or say "forbidden",
// asks about xterm, allows the rest, and appends every fact it receives
// to facts.log in its folder.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log, err := os.OpenFile("facts.log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		os.Exit(2)
	}
	defer log.Close()
	err = plugin.Serve(ctx, os.Stdin, os.Stdout, plugin.Handlers{
		Fact: func(ctx context.Context, c *plugin.Conn, f protocol.Fact) {
			data, _ := json.Marshal(f.Data)
			fmt.Fprintf(log, "%s %s\n", f.Name, data)
		},
		Decide: func(ctx context.Context, c *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
			command, _ := p.Request.Input["command"].(string)
			switch {
			case strings.HasPrefix(command, "rm ") || strings.Contains(command, " rm "):
				return protocol.Decision{Verdict: protocol.Deny, Message: "no deleting files here"}, nil
			case strings.Contains(command, "forbidden"):
				return protocol.Decision{Verdict: protocol.Deny, Message: "nothing forbidden"}, nil
			case strings.Contains(command, "xterm"):
				return protocol.Decision{Verdict: protocol.Ask, Message: "a person should approve terminals"}, nil
			}
			return protocol.Decision{Verdict: protocol.Allow}, nil
		},
	})
	if err != nil {
		os.Exit(1)
	}
}
