// Command cmdhost is the smallest program that embeds the Host for
// command plugins alone: it starts the plugin folder its argument names
// and asks it one decision. Its dependencies and its size are measured by
// TestCommandHostDeps: it links no script or WebAssembly engine.
package main

import (
	"context"
	"fmt"
	"os"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

func main() {
	ctx := context.Background()
	h := escouade.New(nil)
	defer h.Close(ctx)
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cmdhost <plugin folder>")
		os.Exit(2)
	}
	if _, err := h.Start(ctx, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	d, err := h.Decide(ctx, protocol.PermissionRequest{ID: "1", Kind: "command", Input: map[string]any{"command": "ls"}},
		escouade.About{Project: escouade.DefaultProject})
	fmt.Println(d.Verdict, err)
}
