// Package escouade hosts Escouade plugins: programs that receive facts
// (what changed: an agent created, a ticket moved), decide permissions (may
// this agent run rm -rf?), and call back for their secrets, settings and
// files, over the Escouade plugin protocol, version 1.
//
// The protocol is JSON-RPC 2.0, one message per line. Its contract is the
// JSON Schema in schema/escouade-plugin-protocol-1.schema.json, embedded
// here: the method table, the timeouts (MethodTimeout), the fact names and
// the error codes are read from it, and every message a Host sends is held
// to it by the tests.
//
// # A Host
//
// The program that links this package makes a Host with New, giving it its
// services in Options (each has a working default): a SecretStore (the
// desktop's keychain by default), a SettingsSource (user values and each
// project's .escouade.yml), Projects (which plugins are on where, which
// projects are private), Agents, a journal (a slog.Handler) and a Clock.
//
// Start loads a plugin folder: its manifest, plugin.json, is parsed strictly
// (ParseManifest; every problem names its field's path), and its program,
// run.command, is started in its own process group, with a parent-death
// signal, its stdout and stdin the protocol's lines and its stderr drained
// into the journal. The Host sends initialize, then:
//
//   - Fact publishes a fact to the plugins that list it in
//     permissions.events and are on for its project (a private project's
//     facts go only to plugins turned on for it), numbered by seq;
//   - Decide asks every plugin with permissions.decide, in parallel, within
//     500 ms: a deny wins, an ask or a silence means ask;
//   - the plugins' requests are served: secrets/get (only the keys of
//     permissions.secrets), settings/get, files/read (the plugin's own
//     folder only, through os.Root: no .., no link out, nothing hidden, not
//     the manifest), and log, which goes to the journal.
//
// A plugin that crashes is restarted with a growing delay, and disabled
// past its crash budget; the agents attached to it (Plugin.Attach) are
// given again. Plugin.Stop and Host.Close stop plugins with a shutdown
// request, then the end of their input, then SIGTERM, then SIGKILL to their
// process group. A plugin that misbehaves (lines that are not JSON, a line
// of 100 MiB, answers to nothing, silence, a flood on stderr) is answered
// as the protocol says and journaled, and never holds up the Host or the
// other plugins.
//
// # Plugins in Go
//
// Package plugin is the plugin's side: plugin.Serve answers the Host on a
// program's stdin and stdout, and plugin.Connect runs the same handlers
// in-process against a Host (StartFunc), which is how a plugin is tested.
// The examples below use it.
//
// # What is not here yet
//
// Plugins run in-process from run.wasm and run.js, and the methods only they
// may call (net/*, ws/*, timer/*, fs/*, proc/*), come later: a plugin run
// by a command is answered methodNotFound for them, as the protocol says.
// The transport (a process's stdio, or pipes in memory) is kept apart from
// the connection and the lifecycle, which they will share.
package escouade
