package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

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

// mcpOptions are the MCP server's options from the flags.
func mcpOptions(cfg config, log *slog.Logger) (mcpserver.Options, error) {
	w, h, err := parseSize(cfg.mcpSize)
	if err != nil {
		return mcpserver.Options{}, fmt.Errorf("-mcp-screen %q: want WxH, each from 64 to 8192", cfg.mcpSize)
	}
	if cfg.mcpSessions < 0 {
		return mcpserver.Options{}, fmt.Errorf("-mcp-sessions %d: want 1 or more", cfg.mcpSessions)
	}
	if cfg.mcpIdle != 0 && cfg.mcpIdle < time.Second {
		return mcpserver.Options{}, fmt.Errorf("-mcp-idle %v: want a second or more", cfg.mcpIdle)
	}
	return mcpserver.Options{Name: "shinken-example", Screen: mcpserver.Size{W: w, H: h}, Logger: log,
		MaxHTTPSessions: cfg.mcpSessions, HTTPSessionIdle: cfg.mcpIdle, ShellLines: shellLines(cfg)}, nil
}

// shellLines says whether the shell tool takes command lines only
// (mcpserver.Options.ShellLines): wherever something judges the agent (the
// guard, -plugins, or a -remote runtime's own, which the daemon cannot
// see), since text typed as is reaches a guard as dynamic. With -no-guard
// and no plugins, nothing judges, and the shell is a bash that takes any
// input, a program's included.
func shellLines(cfg config) bool {
	return !cfg.noGuard || cfg.plugins != "" || cfg.remote != ""
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
