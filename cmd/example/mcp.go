package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/daemon"
	"shinken.dev/go/shinken/mcpserver"
)

// The daemon serves MCP three ways:
//   - at /mcp on its HTTP listener (streamable HTTP, the daemon's token as
//     a bearer token), always;
//   - on its standard input and output with -mcp stdio, for the backend it
//     opened, and then it opens no listener and writes nothing else on
//     stdout (logs go to stderr);
//   - with -mcp stdio -remote URL, for the runtime at URL (a sandbox seen
//     from outside), opening no backend at all.

// runRemoteMCP serves MCP on stdin and stdout for the runtime at url.
func runRemoteMCP(ctx context.Context, url, token string, opts mcpserver.Options) error {
	dopts := &client.DialOptions{Token: token, Name: "shinken-mcp"}
	dial := func(ctx context.Context) (*client.Client, error) { return client.Dial(ctx, url, dopts) }
	c, err := dial(ctx)
	if err != nil {
		return fmt.Errorf("-remote: %w", err)
	}
	defer c.Close()
	opts.Logger.Info("serving MCP for a remote runtime", "url", url)
	opts.Dial = dial
	srv, err := mcpserver.New(ctx, c, &opts)
	if err != nil {
		return err
	}
	return daemon.ServeMCPStdio(ctx, srv, opts.Logger)
}

// mcpOptions are the MCP server's options from the flags.
func mcpOptions(cfg config, log *slog.Logger) (mcpserver.Options, error) {
	w, h, err := parseSize(cfg.mcpSize)
	if err != nil {
		return mcpserver.Options{}, fmt.Errorf("-mcp-screen %q: want WxH, each from 64 to 8192", cfg.mcpSize)
	}
	return mcpserver.Options{Name: "shinken-example", Screen: mcpserver.Size{W: w, H: h}, Logger: log}, nil
}

// checkMCPFlags refuses -mcp and -remote values the daemon cannot honour.
func checkMCPFlags(cfg config) error {
	switch {
	case cfg.mcp != "" && cfg.mcp != "stdio":
		return fmt.Errorf("-mcp %q: want stdio (MCP over HTTP is always served at /mcp)", cfg.mcp)
	case cfg.remote != "" && cfg.mcp != "stdio":
		return errors.New("-remote needs -mcp stdio")
	case cfg.remote != "" && cfg.plugins != "":
		return errors.New("-remote serves a runtime elsewhere: its plugins are that runtime's, -plugins does not apply")
	}
	return nil
}
