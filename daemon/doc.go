// Package daemon composes a sandbox daemon from Shinken's parts, the way
// net/http composes a server: a program opens a desktop (a backend), says
// in Options what to serve, and calls New and Run. The package example is
// a complete daemon guarded by the shipped guard (escouade/guard: a coding
// agent's programs, allowed by identity), in about fifty lines.
//
// # What a daemon serves
//
// On each listener of Options.Listen (TCP "host:port", "unix:/path",
// "vsock:PORT"):
//
//   - /aci, the ACI v0 over WebSocket, always;
//   - /healthz (alive) and /readyz (ready, or 503 with the reason in
//     words), always, for probes and load balancers;
//   - /mcp, MCP over streamable HTTP, with Options.MCP;
//   - /metrics, Prometheus, with Options.Metrics (behind the token, or on
//     a listener of its own without one);
//   - the inspector page at / and its endpoint /inspect, with
//     Options.Page: the desktop live, its tree, the feed's timeline, a
//     person's takeover of the input, and the replay of recordings.
//
// Daemon.Handler gives the same routes for a server of your own.
//
// # Token
//
// Every endpoint but the probes and the page's files takes the daemon's
// bearer token: Options.Token, or Options.TokenFile, a file followed
// every second and on SIGHUP (sessions opened with an old token are closed
// when it changes). Rotate a token file by renaming a complete file over
// it; one rewritten in place is adopted only once complete (TokenQuiet).
//
// # Host and Origin
//
// /aci, /mcp and /inspect answer only to a Host that names the daemon
// (the connection's own address, localhost on loopback, Options.Hosts)
// and refuse another site's browser page by its Origin (Options.Origins
// lists the sites allowed), with 403 on every TCP listener: DNS rebinding
// and cross-site WebSocket hijacking are kept out before any token is
// read. The page's own origin passes.
//
// # Readiness
//
// /readyz is ready when the daemon is not draining or swapping desktops,
// the desktop's Check passes, its backend captures a frame, and every
// Options.Ready check passes. The checks run in the background, never per
// probe, so a probe answers in microseconds under any load; what fails is
// said in words (a NotReadyError names the part and why), the detail goes
// to the log only.
//
// # Shutdown
//
// Run ends when its ctx does, at SIGINT or SIGTERM, or when the desktop
// fails for good (Desktop.Done), and then drains: /readyz answers 503 at
// once; new sessions are still accepted for Options.DrainDelay (load
// balancers remove endpoints late), then refused; the calls in flight
// finish within Options.DrainTimeout and the sessions close with 1001; the
// MCP sessions, the recording, the Runtime (killing the commands still
// running), the plugins and the desktop are closed, in that order. One
// stack of closers owns the cleanup: whatever New opened is closed on
// every error path, and at Close.
//
// # Plugins and recording
//
// Options.Plugins starts an Escouade Host whose plugins decide every exec
// and launch_app (the machine tools' included): plugins in a folder
// (plugin.json) and plugins written in Go run in the daemon's process
// (GoPlugin). An action goes ahead only when every plugin allows it (an
// ask counts as Plugins.OnAsk says). The daemon judges nothing unless told
// to: with neither Plugins nor a RuntimeOptions.Authorizer every command
// the agent sends runs, and New warns so. The package example, and
// cmd/example by default, run the shipped guard (escouade/guard) as a
// GoPlugin. They allow the agent's shell with each line typed at it judged
// as a command (guard.Policy.OnInteractive with TypedAtPrompt): the
// runtime types a judged line only when the shell itself will read it as a
// command line, never to a program the shell started (a pager, an editor,
// less's !cmd), and shows text typed as is as dynamic; set
// mcpserver.Options.ShellLines so that the MCP shell tool types lines so.
// With no project configured, the Host knows one named
// "default", so a daemon's gate never refuses for want of a project.
// Options.Record records the session (the screen, the actions, the trees)
// to a file that package record reads, the page replays and ExportMain
// turns into an MP4.
package daemon
