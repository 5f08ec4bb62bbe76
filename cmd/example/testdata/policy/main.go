// Command policy is a test Escouade plugin: it denies commands that delete
// files, asks about xterm, allows the rest, and appends every fact it
// receives to facts.log in its folder.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/plugin"
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
		Fact: func(ctx context.Context, c *plugin.Conn, f escouade.Fact) {
			data, _ := json.Marshal(f.Data)
			fmt.Fprintf(log, "%s %s\n", f.Name, data)
		},
		Decide: func(ctx context.Context, c *plugin.Conn, p escouade.DecideParams) (escouade.Decision, error) {
			in, _ := json.Marshal(p.Request.Input)
			s := string(in)
			switch {
			case strings.Contains(s, `"rm"`) || strings.Contains(s, "rm -"):
				return escouade.Decision{Verdict: escouade.Deny, Message: "no deleting files here"}, nil
			case strings.Contains(s, "xterm"):
				return escouade.Decision{Verdict: escouade.Ask, Message: "a person should approve terminals"}, nil
			}
			return escouade.Decision{Verdict: escouade.Allow}, nil
		},
	})
	if err != nil {
		os.Exit(1)
	}
}
