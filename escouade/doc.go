// Package escouade hosts Escouade plugins: programs that receive facts
// (what changed: an agent created, a ticket moved), decide permissions (may
// this agent run rm -rf?), and call back for their secrets, settings and
// files, over the Escouade plugin protocol, version 1 (JSON-RPC 2.0, one
// message per line; its contract is the JSON Schema of package schema,
// and its types are package protocol's).
//
// This is the embedder's API. A plugin's author reads package plugin (a
// plugin in Go), package js (the run.js API), package wasm (the run.wasm
// ABI) or package manifest (plugin.json); what a plugin may do and what
// holds it, fence by fence, is in REFERENCE.md beside this package.
//
// # A Host
//
// New makes a Host from Options, each field with a working default: a
// SecretStore (the desktop's keychain), a SettingsSource (user values and
// each project's .escouade.yml), Projects (which plugins are on where,
// which projects are private; DefaultProject is always known), Agents, a
// journal (a slog.Handler) and a Clock.
//
// Start loads a plugin folder: its manifest, plugin.json, is parsed
// strictly (package manifest names every problem's path), and its code runs
// as the manifest says: run.command as a program of its own, in a minimal
// environment that never holds the program's tokens; run.js and run.wasm
// by an engine the program handed to the Host (Options.Languages), in a
// process of its own by default. StartAll starts several folders at once,
// and one that fails keeps none of the others from starting; StartFunc
// runs a plugin written in Go inside the program (plugin.Serve), with no
// process. A folder whose id is loaded already is refused (ErrDuplicate,
// naming both folders): a plugin's identity is its id.
//
// Then:
//
//   - Fact publishes a fact to the plugins that list it in
//     permissions.events and are on for its project;
//   - Decide asks every plugin with permissions.decide, in parallel,
//     within 500 ms: a deny wins, and a decision fails closed;
//   - Plugin.Attach gives a plugin an agent, whose folders its fences may
//     then reach;
//   - the plugins' requests are served within their permissions
//     (secrets/get, settings/get, files/read, log; and for run.js and
//     run.wasm the fences: net/*, ws/*, timer/*, fs/*, proc/*).
//
// A plugin that crashes is restarted with a growing delay, and disabled
// past its crash budget. Plugin.Stop and Host.Close stop plugins with a
// shutdown request, then the end of their input, then SIGTERM, then
// SIGKILL; what a plugin started ends with it (a cgroup, a shepherd or its
// process group, as the system allows: REFERENCE.md says exactly what
// holds). A plugin that misbehaves is answered as the protocol says and
// journaled, and never holds up the Host or the other plugins: what one
// line can cost is bounded (an object of 1024 members, a batch of 256
// messages, an answer of 8 MiB), and every check of a line is linear.
//
// # Engines
//
// A program that runs run.js or run.wasm plugins links their engines by
// handing them over, and calls EngineMain first thing in main: each
// plugin's engine runs in the program, started again, so that what a
// plugin's code does to its engine costs that process alone:
//
//	func main() {
//		escouade.EngineMain(js.Language(), wasm.Language())
//		h := escouade.New(&escouade.Options{Languages: []escouade.Language{js.Language(), wasm.Language()}})
//		// ...
//	}
//
// A program with command plugins alone hands none, calls EngineMain() for
// the shepherds, and links no script or WebAssembly engine. A plugin whose
// engine was not handed over fails to start with ErrNoLanguage, naming the
// package to add.
package escouade
