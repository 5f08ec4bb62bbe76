// Package daemon composes a sandbox daemon from Shinken's parts, the way
// net/http composes a server: a program opens a desktop (a backend), says
// in Options what to serve, and calls New and Run. The package example is
// a complete daemon guarded by the shipped guard (escouade/guard), in about
// fifty lines.
//
// # What a daemon serves
//
// On each listener of Options.Listen (TCP "host:port", "unix:/path",
// "vsock:PORT"):
//
//   - /aci, the ACI v0 over WebSocket, always;
//   - /healthz (alive) and /readyz (ready, or 503 saying why), always;
//   - /mcp, MCP over streamable HTTP, with Options.MCP;
//   - /metrics, Prometheus, with Options.Metrics;
//   - the inspector page at / and its endpoint /inspect, with Options.Page.
//
// Daemon.Handler gives the same routes for a server of your own. Every
// endpoint but the probes and the page's files takes the daemon's bearer
// token (Options.Token or Options.TokenFile). Before any token is read,
// /aci, /mcp, /inspect and /metrics refuse with 403, on every TCP
// listener, a Host that does not name the daemon (DNS rebinding) and
// another site's browser page by its Origin (see Options.Hosts and
// Options.Origins).
//
// # Readiness and shutdown
//
// /readyz is ready when the daemon is not draining or swapping desktops,
// a token is loaded, the desktop's Check passes, its backend captures a
// frame, and every Options.Ready check passes. The checks run in the
// background, never per probe, so a probe answers in microseconds under
// any load; what fails is said in words (a NotReadyError names the part
// and why), the detail goes to the log only.
//
// Run drains in the order its doc gives. Whatever New opened is closed on
// every error path, and at Close.
//
// # Plugins and recording
//
// Options.Plugins starts an Escouade Host whose plugins decide every exec
// and launch_app (the machine tools' included): an action goes ahead only
// when every plugin allows it. With neither Plugins nor a
// RuntimeOptions.Authorizer every command the agent sends runs, and New
// warns so. The package example, and cmd/example by default, run the
// shipped guard as a GoPlugin, allowing the agent's shell with each line
// typed at it judged as a command (guard.Policy.OnInteractive with
// TypedAtPrompt): the runtime types a judged line only when the shell
// itself will read it as a command line, never to a program the shell
// started (a pager, an editor, less's !cmd), and shows text typed as is as
// dynamic; the MCP shell tool does so with mcpserver.Options.ShellLines.
// Options.Record records the session to a file that package record reads,
// the page replays and ExportMain turns into an MP4.
package daemon
