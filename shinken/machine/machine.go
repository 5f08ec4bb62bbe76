// Package machine gives an agent the computer behind an ACI runtime: its
// files, background commands, an interactive shell and its windows, over
// a [*client.Client]'s exec. ACI v0 has no verbs for these. Files,
// commands and the shell run fixed plumbing with the caller's values as
// arguments, never spliced into a script, which the runtime recognizes:
// its policy (Authorizer, Escouade plugins) judges each call as what it
// does (a read or an edit of a path, the command started, the line typed),
// not as the script. Window operations are judged as the commands and
// input they are made of. A refusal is the exec's, aci.ErrPermissionDenied.
//
//	m := machine.New(c, nil)
//	notes, err := m.ReadFile(ctx, "~/notes.txt", nil) // at most 512 KiB unless asked
//	if err != nil {
//		return err // a *fs.PathError: fs.ErrNotExist, aci.ErrPermissionDenied...
//	}
//	return m.WriteFile(ctx, "~/notes.txt", append(notes, "done\n"...))
//
// A Tools is safe for concurrent use, as its Client is.
package machine

import (
	"sync"

	"shinken.dev/go/shinken/client"
)

// Tools reaches the runtime's machine through one Client.
type Tools struct {
	c    *client.Client
	opts Options

	mu   sync.Mutex
	home string // asked of the runtime once, when opts.Home is ""
}

// Options configure Tools. A nil *Options means defaults.
type Options struct {
	// Home is the absolute folder that relative paths and ~ resolve
	// against; default the agent's home, asked of the runtime on first
	// need (see Tools.Home).
	Home string
}

// New returns the tools of the machine c's runtime runs on.
func New(c *client.Client, opts *Options) *Tools {
	m := &Tools{c: c}
	if opts != nil {
		m.opts = *opts
	}
	return m
}
