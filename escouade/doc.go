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
// StartAll starts the plugins of several folders at once: one that is slow
// or silent at initialize, a manifest that does not hold, or two folders
// claiming one id (both are refused) are journaled and returned, and keep
// none of the others from starting. A plugin's identity is its id: a
// folder started while another holds its id is refused (ErrDuplicate,
// naming both folders, and journaled), and the first keeps it; secrets are
// bound to the id and the folder, so that an impostor reads none.
//
// Start loads a plugin folder: its manifest, plugin.json, is parsed strictly
// (ParseManifest; every problem names its field's path), and its program,
// run.command, is started in its own process group, with a parent-death
// signal, its stdout and stdin the protocol's lines and its stderr drained
// into the journal, in a minimal environment: the Host's PATH, HOME, USER,
// LOGNAME, TMPDIR, TZ, LANG, LANGUAGE, LC_ALL, LC_CTYPE and LC_MESSAGES,
// the Go runtime's GODEBUG, GOMAXPROCS and GORACE, and the Host's values
// of the variables its permissions.env names; never a token or secret of
// the program that links the Host, nor ESCOUADE_* or SHINKEN_* (the
// runtime's token is SHINKEN_TOKEN: a manifest that names one of them is
// refused); a module (run.wasm) or
// a script (run.js) is run by an engine of the Host, in a process of its
// own (see below). The Host sends initialize, then:
//
//   - Fact publishes a fact to the plugins that list it in
//     permissions.events and are on for its project (a private project's
//     facts go only to plugins turned on for it), numbered by seq;
//   - Decide asks every plugin with permissions.decide, in parallel, within
//     500 ms: a deny wins, an ask or a silence means ask, and so does a
//     plugin that cannot answer (restarting, or disabled past its crash
//     budget) until it is stopped: a decision fails closed;
//   - the plugins' requests are served: secrets/get (only the keys of
//     permissions.secrets), settings/get, files/read (the plugin's own
//     folder only: no .., no link out, nothing hidden, not the manifest,
//     only a regular file with one name, opened as the fences below say),
//     and log, which goes to the journal.
//
// A plugin that crashes is restarted with a growing delay, and disabled
// past its crash budget; the agents attached to it (Plugin.Attach) are
// given again. Plugin.Stop and Host.Close stop plugins with a shutdown
// request, then the end of their input, then SIGTERM, then SIGKILL to their
// process group. A plugin that misbehaves (lines that are not JSON, a line
// of 100 MiB, answers to nothing, silence, a flood on stderr) is answered
// as the protocol says and journaled, and never holds up the Host or the
// other plugins. What one line can cost the Host is bounded: an object of
// more than 1024 members, or a batch of more than 256 messages, is refused
// whole with one error (a batch's items are answered in one line of 8 MiB
// at most; an answer past it is replaced by an error saying so); every
// check of a line is linear in its size. The same bounds hold for a
// manifest (which names 50 problems at most) and a .escouade.yml (a mapping
// of 1024 keys at most; aliases expanded, 65,536 values).
//
// # Plugins in Go
//
// Package plugin is the plugin's side: plugin.Serve answers the Host on a
// program's stdin and stdout, and plugintest.Connect runs the same handlers
// in-process against a Host (StartFunc), which is how a plugin is tested.
// The examples below use it.
//
// # Plugins in WASM: run.wasm and run.js
//
// A plugin whose manifest says run.wasm or run.js runs in an engine of the
// Host and has no network, files or programs of its own: it reaches them
// through the methods only such a plugin may call (net/*, ws/*, timer/*,
// fs/*, proc/*), under its permissions. A plugin run by a command is answered
// methodNotFound for them. StartFunc follows the manifest: a RunFunc
// started with a manifest of run.js is served as a script is, which is how
// the fences are tested in Go.
//
// run.wasm is a WebAssembly module run by wazero (pure Go), with only
// standard input and output (the protocol's lines), standard error (the
// journal), clocks and randomness: no folder is mounted, no variable set,
// no socket given. Its memory is capped (Options.WASMMemoryPages), a loop
// without end dies with its instance, and its compilation is cached on
// disk (Options.WASMCacheDir), so that a start of the Host, or of an
// isolated engine, does not compile it again; in-process, a restart of the
// plugin reuses the module compiled in memory.
// It may also call the Host synchronously, through two functions it
// imports from the module "escouade", all values i32:
//
//	call(method_ptr, method_len, params_ptr, params_len, out_ptr, out_cap) -> n
//	result(out_ptr, out_cap) -> n
//
// call runs method with params (a strict JSON object; params_len 0 for
// none) and returns the length n of its answer, {"result":...} or
// {"error":{"code":...,"message":...}}, written at out_ptr when it fits in
// out_cap; otherwise the Host keeps it until the next call and result
// writes it (it returns -1 while out_cap is too small or nothing is kept).
// A notification (log, timer/cancel, net/credit, net/cancel) is answered
// {"result":null}. A pointer outside the module's memory traps. What a
// method sends afterwards (timer/fired, net/chunk, proc/out, ws/message)
// comes as a line on standard input, after the answer that names it. A Go
// module (GOOS=wasip1) imports them with //go:wasmimport escouade call;
// reading its standard input blocks the whole module until a line comes,
// so it serves its lines from one goroutine.
//
// run.js is a script run by goja (pure Go) on an event loop: one turn at a
// time, the top level, then each of the Host's lines, promise jobs
// included. A prelude gives it what a browser would, made of the
// protocol's methods: fetch (net/fetch; net/stream when init.stream or
// init.sse, the body then read with body.getReader(), credited as it is
// read), setTimeout, setInterval and their clears (timer/*), WebSocket
// (ws/*, its sends in order), console (log), TextEncoder and TextDecoder.
// The object escouade holds lang, plugin and host from initialize; on,
// onInitialize, onFact, onDecide, onAttach and onShutdown for the Host's
// messages (a handler may return a promise); call and notify for any
// method; secret, settings, file, log; fs.read, fs.write, fs.stat,
// fs.list and fs.canon; spawn, which resolves to a program with on("out"),
// on("exit"), write, closeInput, kill and output. A refusal rejects with an
// escouade.Error whose code is the protocol's (escouade.codes.refused).
//
// The Host serves a plugin's requests by lines concurrently, and its
// notifications one at a time, in order: a plugin that needs two requests
// served in order (two ws/send) waits for the first answer, as the
// prelude does.
//
// # Isolation
//
// An engine runs a plugin's code, and a plugin's code can break its
// engine: goja recurses in Go on JSON.parse("[".repeat(1e7)) or a regexp
// nested ten million deep, and Go's stack overflow is fatal to the whole
// process; a backtracking regexp, a join of a huge sparse array or
// Array(2e7).fill(0) run in native code that no interrupt reaches; a
// Uint8Array of 768 MiB is allocated at once. So each run.js and run.wasm
// plugin runs, by default (Options.Engine, EngineIsolated), in a child
// process of its own: the program that links the Host, started again with
// nothing of its environment but the Go runtime's GODEBUG, GOMAXPROCS and
// GORACE, and the variable that makes EngineMain run the engine. A program that starts such plugins calls EngineMain first
// thing in main (a test binary, in TestMain); without it Start fails with
// ErrNoEngine, and never falls back to the Host's own process.
//
// The child speaks the protocol's lines on its standard input and output,
// exactly as a plugin run by a command does, and is watched as one: its
// own process group, a parent-death signal, stderr into the journal. A
// second channel (descriptors 3 and 4, JSON-RPC as well) carries a
// module's escouade.call to the Host and the engine's journal entries
// back; the plugin's code never writes to it. What the code does costs its
// process alone, which is killed with its group and restarted within the
// crash budget, then disabled past it; the other plugins and the Host do
// not notice. Its bounds are the kernel's:
//
//   - memory: the process may map Options.EngineMemory (512 MiB) beyond
//     what it holds at its start (RLIMIT_AS, on Linux); past it an
//     allocation fails, which ends it;
//   - CPU time: one life of the process uses Options.EngineCPU (10 min) at
//     most (RLIMIT_CPU), and the kernel kills it there;
//   - its stack grows to 256 MiB at most: a recursion without end is a
//     fatal error sooner;
//   - a turn that does not stop when interrupted (a native call) ends the
//     process a quarter of a second later; a module's turn, the time it
//     runs without reading its input, calling the Host or sleeping, lasts
//     Options.ScriptTurn at most, like a script's.
//
// Other Unix systems get the CPU bound but not the memory bound (RLIMIT_AS
// is not enforced everywhere); Windows has no isolated engine (Start fails
// with an error wrapping errors.ErrUnsupported). EngineInProcess runs the
// engines on the Host's own goroutines, as a RunFunc: it is cheaper (see
// BENCHMARKS.md) but gives none of the above, and is meant for code as
// trusted as the program itself, and for measuring what isolation costs.
//
// Whichever the engine, what reaches a script is bounded, and so is its
// time:
//
//   - a turn lasts Options.ScriptTurn (1 s) at most, and grows the heap by
//     Options.ScriptHeap (256 MiB) at most (the process's heap, looked at
//     every 5 ms of a long turn): past either it is interrupted and the
//     instance ends, a crash within the crash budget;
//   - calls nest 10,000 deep at most;
//   - a line from the Host holds 8 MiB at most, or 6 × limits.fetchBytes
//     and 1 MiB more; a line to the Host, 8 MiB (Options.MaxLine);
//   - what the methods return is bounded as they say: a fetch 1 MiB (or
//     limits.fetchBytes, 32 MiB at most), a file 256 KiB (or
//     limits.fileBytes, 4 MiB at most), a WebSocket message 1 MiB, a
//     stream 256 KiB not yet credited, a program's output 256 KiB not yet
//     read.
//
// # The fences
//
// Each refusal is answered refused, with a message naming the rule.
//
// net/fetch and net/stream reach https only, a host of permissions.network
// or one of its subdomains; {account} opens the host and port the user
// typed for one of the plugin's accounts (Options.Accounts), in http too
// and on the local network; local:shared opens http to 127.0.0.1 on the
// port read in the output of the process of launch.shared, while it lives.
// The addresses a name resolves to are judged at each dial, inside the
// dialer, so that the address judged is the address dialled
// (internal/ssrf): loopback, private, link-local, CGNAT, IPv4-mapped,
// NAT64, 6to4 and Teredo, unspecified, multicast and the clouds' metadata
// addresses are refused, and so are the machine's own interface addresses
// and the networks they are on (read from the system, refreshed every
// 2 s), whatever the table calls them; one refused answer refuses the
// name. No redirection is followed. A fetch answers within 10 s and 1 MiB,
// or the manifest's limits (120 s, 32 MiB at most); one whose deadline cut
// its body is answered failed, never with the part that came. The proxy and TLS of
// Options.Network are followed; through a proxy only the name can be
// judged, and the journal says so. Each plugin has its own connections. A
// stream holds 256 KiB not yet credited (net/credit), 8 at once; one that
// is not sse ends after 120 s without a byte; none ends after net/cancel.
// ws/open reaches wss only, the hosts of net/fetch, 4 sockets at once, a
// message of 1 MiB at most either way (1009 past it), 256 KiB waiting to
// be sent (a long message goes when nothing waits); its headers never go
// to the journal.
//
// timer/set: 10 ms at least, 64 at once; they end with the instance.
//
// fs/* reach the roots permissions.files declares (plugin, temp, and the
// agent's agent, agentRepo, agentHome, for an agent attached to the
// plugin), read or write (plugin is read only): never a .., a ~, a path
// that links followed leaves the roots, a private project's folder for a
// plugin not on for it, a hidden file or folder (an agent's home holds
// .ssh, a repository .env), or a manifest. A path is judged with its links
// followed, then what was judged is opened: under its root, by the path
// resolved, with no link on the way (openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS on Linux where the kernel has it, else one
// O_NOFOLLOW openat per part of the path), non-blocking, and the
// descriptor's real path is checked against it: a name swapped for a link
// meanwhile is refused, never followed. The fences judge names, as they
// are when the file is opened: a local process that renames a folder (or
// exchanges it with .ssh, renameat2's RENAME_EXCHANGE) under a root the
// plugin may read shows the plugin its files under the new name, as a
// plain rename would; no fence can tell a file by where it was before. Only a regular file is read, and
// only one with a single name, under every root: a hard link may name any
// file of its owner (.ssh's keys, a private project's file) and only the
// count tells (tools that share files by hard links, as pnpm's store does,
// have those refused). A write goes through no link at all, and
// its answer names the file written. No write, and no root but plugin,
// reaches into a plugin's folder (one that holds a plugin.json, or a
// loaded plugin's), and no write makes a plugin.json anywhere, file or
// folder: no plugin rewrites a manifest or code, its own or another's, or
// makes a plugin. A read holds 256 KiB (or limits.fileBytes, 4 MiB at most), a
// write 4 MiB, its folders made, each write journaled; a list 4096
// entries, links listed and never followed, hidden ones and private
// projects' folders left out. No method makes a link.
//
// proc/spawn runs a program whose name and arguments are an entry of
// permissions.commands word for word (an entry ending in * lets more words
// follow), found on the agent's PATH, never a path, with no shell, 4 at
// once, each start journaled; in the agent's environment without
// ESCOUADE_*, or, with no agent's, a minimal one of the Host's (PATH,
// HOME, USER, LOGNAME, TMPDIR, TZ, LANG, LANGUAGE and LC_ALL, LC_CTYPE,
// LC_MESSAGES: never a token of the program that links the Host); env is
// set over it only for the variables of a safe set (LANG, LANGUAGE, LC_*
// of the locale, named and never a path, which would make gettext load a
// catalog the plugin wrote; TZ, a zone's name and never a file; NO_COLOR,
// FORCE_COLOR, CLICOLOR, COLUMNS, LINES, CI)
// and those permissions.env names, as written: an allowlist, since git,
// bash, node, python, perl and make each read variables that run anything
// (GIT_CONFIG_*, BASH_ENV, NODE_OPTIONS, PYTHONPATH, PERL5OPT, MAKEFILES…);
// PATH, LD_*, DYLD_*, ESCOUADE_* and SHINKEN_* are never set. It runs in the agent's
// folder, a project's (not a private one the plugin is off for) or the
// plugin's temporary folder. A program that runs what the folder it runs
// in configures (git: a repository's config, hooks and filters, and a
// folder holding HEAD, objects and refs is a repository; make, just, rake;
// npm, npx, pnpm, yarn, bun, deno; cargo, go, mvn, gradle; python,
// python3, node, pip, tox, poetry, bundle) runs only in an agent's or a
// project's folder the plugin may not write (no root of permissions.files
// grants it write there), never in its temporary folder; and git there
// reads the repository's configuration alone: GIT_CONFIG_NOSYSTEM=1,
// GIT_CONFIG_GLOBAL=/dev/null (an agent's home may hold a .gitconfig), no
// repository above the folder, or above the agent's repository that
// holds it (GIT_CEILING_DIRECTORIES), and no GIT_*
// variable but the author's and committer's names, emails and dates and
// GIT_OPTIONAL_LOCKS. An entry ending in * allows any arguments, including
// those that run programs (git -c, git -C, git grep -O, find -exec, make
// -f): it grants what a word-for-word entry with that program would not. Its output comes as text cut between
// characters, and the Host stops reading it while 256 KiB wait to be read
// by the plugin; proc/exit comes after all of it, code null when it was
// killed. proc/write fails past 1 MiB not yet read. proc/kill ends its
// process group, and every program ends with the instance.
//
// launch.shared starts its program (a name on the PATH, an absolute path,
// or a path inside the plugin's folder, as for run.command) with the same
// minimal environment, contained as below; local:shared then opens only a
// port one of its processes is seen to listen on (on Linux, from the
// sockets its processes hold; elsewhere the port it printed). It is a
// native program with the user's rights, whatever runs the plugin (run.js
// and run.wasm included): a plugin that declares one is trusted as a
// command plugin is.
//
// # What ends with a plugin
//
// A command plugin, each program of proc/spawn and the process of
// launch.shared run in a process group of their own, killed when they
// end or are stopped, with a parent-death signal. What else holds their
// descendants depends on the system:
//
//   - Linux, where the Host may make a cgroup (cgroup v2, a child of the
//     Host's own, writable by it): each is started into a cgroup of its
//     own, which holds every descendant whatever it does (setsid, setpgid,
//     a double fork) and is killed with the group: nothing they started
//     outlives them, but for one way out. A process with the user's
//     rights may write its pid into the cgroup.procs of any cgroup its user
//     may write, the Host's own included (cgroup v2 lets a user move its
//     processes between the cgroups it was delegated). Such an escapee
//     is still found while its parent lives in the cgroup (its parentage
//     names it), and is killed before the group, which would take that
//     parent; one whose parent is gone too (a double fork after the move) is
//     no longer held. Only a boundary the Host's user cannot cross stops it
//     (a cgroup namespace on a hierarchy mounted with nsdelegate, a Landlock
//     domain, another user for the plugins), which the Host, running
//     unprivileged, cannot set up. A program that wants no such escape runs
//     its plugins under such a boundary (a systemd service with its own
//     User=, a container). If the Host dies abruptly, the parent-death signal
//     ends the program itself; what it started lives on until the next
//     Host on the machine starts a program and kills what the dead Host's
//     cgroups hold.
//   - Linux, where no cgroup can be made: each is started by a shepherd,
//     the program that links the Host started again (EngineMain runs it,
//     as it runs the engines), which makes itself a child subreaper and
//     starts the program with its standard input, output and error handed
//     through untouched. Every orphan below it is adopted by it, setsid and
//     setpgid or not; when the program ends, when the Host stops it, and
//     when the Host dies (the shepherd's lifeline, a pipe, ends; a
//     parent-death signal comes too), the shepherd kills everything below
//     it and sweeps what it adopts until nothing is left, then exits (a
//     process it may not kill, another user's, is given up on after 5 s,
//     and the journal says so). It costs a start of the program that links
//     the Host (see BENCHMARKS.md) and about 8 MiB of memory per program.
//     A descendant that kills its shepherd (it runs with the user's
//     rights) leaves its escapees to the process group's fate, which a
//     cgroup would not; the journal says so. No second lifeline would
//     hold: whatever a process of the user holds (a pipe, a pidfd, a
//     parent-death signal, which reaches a direct child alone), another
//     process of the same user may close, kill or reset, and the orphans of
//     a killed shepherd go to the nearest subreaper above it, which the
//     Host is not (it would have to reap what it adopts, and a library may
//     not take the wait for every child of its program). Without EngineMain there is
//     no shepherd, and the group is all there is.
//   - Other Unix systems: the process group; a descendant that left it
//     (setsid, setpgid) survives it, and a Host that dies abruptly leaves
//     its programs to notice their closed input.
//   - Windows: only the program itself is killed.
//
// The engines of run.js and run.wasm plugins get a cgroup where one can be
// made, never a shepherd: the code they run has no way to start a process.
package escouade
