// Package guard is the guard Shinken ships, so that an embedder
// configures one rather than writes one: an allowlist of programs by
// identity, with argument rules for the programs that run others, and
// roots for the files the agent's machine tools read and change.
//
//	g, err := guard.New(&guard.Policy{
//		Allow: []string{"ls", "cat", "grep", "find", "git", "sed", "echo"},
//		Write: []string{"/home/agent/work"},
//	})
//	…
//	plugin.Handlers{Decide: g.Decide} // the guard as an in-process plugin
//
// # What it allows
//
// A request of kind command (see protocol.CommandInput) is allowed when
// every simple command the gate shows in input.commands is either a
// shell builtin that runs nothing (echo, cd, test, set -e…; never eval,
// source, exec, trap, alias, hash) or a program on the allowlist, and its
// arguments pass that program's rule (DefaultRules: find without -exec or
// -delete, git without -c or hooks-running forms, sed and awk whose
// scripts run nothing, interpreters only with no code, make asked). A
// program is matched by its file's identity: the SHA-256 and the device
// and inode the gate shows (input.program_id), or that the guard reads
// itself when the gate shows none, against those pinned when the Guard
// was made. A copy of rm named ls, a link to rm named ls, or ls under
// another name never passes as ls. A command not found, a request the
// gate marks dynamic (a $VAR, a $(…), a glob, eval, a line that does not
// parse) or interactive is refused, or asked about (Policy.OnDynamic,
// Policy.OnInteractive). The variables a request sets, in its env or
// before a command, must be named in Policy.Env: BASH_ENV, LD_PRELOAD,
// GIT_CONFIG_*, PATH and their kin make programs run other code.
//
// A redirection that writes (>, >>, >|, <>, &>) is an edit of its target.
// An edit (a machine tool's write, mkdir, move or delete, and a
// redirection) is allowed under Policy.Write, never of a root itself,
// nor of a protected file (DefaultProtected: shell start-up files, .git,
// .ssh…); a read under Policy.Read or Policy.Write. Paths are judged as
// real paths: .. cleaned, links followed, a path that does not exist yet
// by its nearest existing parent.
//
// # What it cannot know
//
// The guard judges what the request shows. It cannot know what an
// allowed program does with its arguments beyond its rule (cat reads
// any file it names: the roots bind the machine tools, not a command's
// arguments); what a program reads at run time (a configuration, a
// Makefile, a script given to an interpreter), which is why the files
// programs run are protected from edits and the interpreters are asked
// about; nor what a file the agent can write becomes between the
// judgment and the run, which is why an allowed program may not lie in
// a Write root. It trusts the gate's view: what a gate cannot see, it
// must mark dynamic.
//
// An interactive shell (the shell tool) is allowed only with
// Policy.OnInteractive allow, which needs Policy.TypedAtPrompt: each line
// typed at it is judged as a command, in the folder the lines before moved
// the shell to (input.cwd: its relative paths, ./programs and git's
// repository), and that holds only while the shell itself reads it. A
// program the shell starts reads the terminal too (a pager, an editor git
// opens, man, less's !cmd, vim's :!cmd): a line it read would run
// unjudged. Shinken's runtime types a line only when the shell's process
// group has the terminal's foreground and the shell has printed its prompt
// since the last line, one line at a time, in the folder it was judged in
// (a line judged in a folder the shell has left is judged again: a plugin
// may see one line twice), and shows text typed otherwise as dynamic; the
// shell's environment turns pagers and editors off (PAGER=cat,
// EDITOR=false…). The guard cannot see the terminal itself: the
// environment is defence in depth (a program may still open /dev/tty), and
// the runtime's foreground rule is the rule. The prompt's mark lives in
// the shell's folder, which is the agent's: the guard protects it from
// redirects, but an allowed program that writes a file its arguments name
// (cp, dd) could write it, and have a line typed while the shell runs one
// of its own builtins (read). That line is still one the guard judged as a
// command, typed while no program the shell started holds the terminal.
//
// A denylist by name cannot hold: rm has a hundred other names (find
// -delete, unlink, shred -u, mv over a file, a copy of rm, a link, an
// interpreter's one-liner, a program the agent wrote), and a shell has
// a hundred ways to spell one. Allow what you know, by identity.
package guard
