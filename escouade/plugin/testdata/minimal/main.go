// Command minimal is the smallest plugin the SDK makes: it answers the
// Host and allows everything. Its size is what a Go plugin costs.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := plugin.Serve(ctx, os.Stdin, os.Stdout, plugin.Handlers{
		Decide: func(context.Context, *plugin.Conn, protocol.DecideParams) (protocol.Decision, error) {
			return protocol.Decision{Verdict: protocol.Allow}, nil
		},
	})
	if err != nil {
		os.Exit(1)
	}
}
