// Package gate is the bridge between a Shinken runtime and an Escouade
// Host: a Gate is the runtime's shinken.Authorizer, asking the Host's
// plugins whether the agent may run a program (exec) or start an
// application (launch_app).
//
// Every request has the shape of protocol.CommandInput: kind "command",
// tool "exec" or "launch_app", the whole command line as one string, with
// argv, cwd, env and stdin. A shell line and an argv that run the same
// program are seen alike: argv ["git", "status"] with env {"PATH": …}
// reads as PATH=… git status.
//
// # What the gate shows
//
//   - program and program_id: the real file argv[0] names as execve opens
//     it (on the PATH it will have, links resolved), its device, inode and
//     SHA-256;
//   - commands: each simple command the line runs, parsed as its shell
//     reads it (dash as POSIX, bash as bash), with its variables, program,
//     program_id (none for a builtin) and redirections (> f writes f); a
//     wrapper's command (env, nice, nohup, setsid, stdbuf, timeout, GNU
//     time, sudo, doas, command, exec, sh -c, bash -c, find -exec) follows
//     it, as a command of its own;
//   - stdin, its first protocol.MaxStdinShown bytes (stdin_cut past them);
//   - dynamic: some of what runs is known only when it runs, or the gate
//     doubts: an expansion ($VAR, $(…), a glob, a tilde, {a,b}, $'…');
//     eval, source, a function, an alias, trap with an action, hash -p,
//     enable, shopt, set -o; a variable that runs code (BASH_ENV, ENV,
//     PS4, BASH_FUNC_*, LD_*, HOME, GIT_*, PYTHON*, NODE_OPTIONS…), in the
//     line or the exec's env; a PATH with a relative or empty entry, or
//     set by read or a loop; a cd before a relative name; a program not
//     found, or one the line may make (cp, ln, chmod…); a wrapper option
//     unknown to the gate (env -S, sudo -s); a shell it cannot parse
//     (zsh), or reading a script, stdin or rc files (-i, -l); a program
//     that runs what it is given (interpreters but for --version, make,
//     xargs, awk's system and pipes, sed's e, w and -i, vim, git -c and
//     aliases, tar's --to-command, gdb, xdg-open, ionice, chroot,
//     strace…); git in a repository with a hook or a config key not known
//     to be inert (core.fsmonitor, include.path…), in one it cannot tell
//     (after a cd), or beside a write into .git; a write redirection of a
//     compound command; a line that does not parse.
//
// A guard cannot know what a dynamic request runs, what a program does
// with its arguments (find -delete, sort -o, git clean, rm under any
// name), what its own files make it run (git config, a Makefile, trusted
// with their writers), nor a file changed before the run. No denylist by
// name holds: allow programs by identity (program_id), with argument
// rules for those that write or run, and refuse or ask what is dynamic.
//
// A Gate publishes request.permission before asking and request.answered
// after, and refuses unless the plugins allow (or ask: Options.OnAsk),
// failing closed.
package gate

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// Options configure a Gate. A nil *Options means the defaults.
type Options struct {
	// Project is the project every request is about; "" means
	// escouade.DefaultProject. One the Host does not know refuses all.
	Project string
	// Env is the environment the runtime starts programs with (an exec's
	// env goes over it), whose PATH finds them; nil means os.Environ().
	Env []string
	// OnAsk is what an ask means with no one to ask: protocol.Allow, or Deny.
	OnAsk protocol.Verdict
	// Log receives a line per decision; nil means none.
	Log *slog.Logger
	// OnDecision, when set, gets each request and the plugins' decision
	// (before OnAsk), on the deciding goroutine: keep it short.
	OnDecision func(protocol.PermissionRequest, protocol.Decision)
}

// A Gate asks a Host's plugins about actions; it is safe for concurrent use.
type Gate struct {
	host    *escouade.Host
	project string
	onAsk   protocol.Verdict
	log     *slog.Logger
	seq     atomic.Uint64
	env     []string
	decided func(protocol.PermissionRequest, protocol.Decision)
}

// New returns a Gate asking h's plugins.
func New(h *escouade.Host, opts *Options) *Gate {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Project == "" {
		o.Project = escouade.DefaultProject
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.OnAsk != protocol.Allow {
		o.OnAsk = protocol.Deny
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Gate{host: h, project: o.Project, onAsk: o.OnAsk, log: o.Log, env: o.Env, decided: o.OnDecision}
}

// A refusedError is the Gate's refusal: the plugins' combined decision,
// and the request they were asked.
type refusedError struct {
	Request  protocol.PermissionRequest
	Decision protocol.Decision
}

// Error says why, as the deciding plugin worded it when it did.
func (e *refusedError) Error() string {
	switch {
	case e.Decision.Message != "":
		return e.Decision.Message
	case e.Decision.Verdict == protocol.Ask:
		return "no plugin allowed it and there is no person to ask"
	}
	return "refused by plugin " + e.Decision.Plugin
}

// Is reports whether target is protocol.ErrRefused, so that
// errors.Is(err, protocol.ErrRefused) holds for every refusal.
func (e *refusedError) Is(target error) bool { return target == protocol.ErrRefused }

// Request returns the permission request for req under the id id, its
// programs found on this process's PATH; only exec and launch_app have one.
func Request(req shinken.AuthRequest, id string) (protocol.PermissionRequest, error) {
	var env []string // the PATH alone is read of it: not the whole environment copied
	if path, ok := os.LookupEnv("PATH"); ok {
		env = []string{"PATH=" + path}
	}
	return request(req, id, env)
}

// request is Request, with programs found in env.
func request(req shinken.AuthRequest, id string, env []string) (protocol.PermissionRequest, error) {
	a := req.Action
	if a == nil {
		return protocol.PermissionRequest{}, fmt.Errorf("gate: a request without an action")
	}
	if req.Intent != nil {
		return intentRequest(*req.Intent, id, env)
	}
	var in protocol.CommandInput
	tool := protocol.ToolExec
	switch req.Verb {
	case aci.VerbExec:
		switch {
		case a.Shell != nil && a.Argv == nil:
			in = protocol.ShellCommand(*a.Shell)
		case a.Argv != nil && a.Shell == nil:
			in = protocol.ArgvCommand(a.Argv)
		default:
			return protocol.PermissionRequest{}, fmt.Errorf("gate: an exec needs exactly one of argv and shell")
		}
		if a.Cwd != nil {
			in.Cwd = *a.Cwd
		}
		if a.Env != nil {
			in.Env = make(map[string]string, len(a.Env))
			for k, v := range a.Env {
				in.Env[k] = v
			}
		}
		if a.Stdin != nil {
			in.Stdin, in.StdinCut = shownStdin(*a.Stdin)
		}
		r := newReader(env, in.Env, in.Cwd)
		if a.Shell != nil {
			// The exec's env is the shell's, and every command's it runs:
			// shown on each, as PATH=… git status shows it.
			r.inherit = in.Env
			for k, v := range in.Env {
				if runsCode(k) || (k == "PATH" && strings.Contains(v, "~")) {
					r.dynamic = true
				}
			}
			r.line(*a.Shell, 0)
			in.Program, in.ProgramID = r.top("/bin/sh")
		} else if len(in.Argv) > 0 {
			// An argv with env reads as the shell line that does the
			// same: PATH=… git status.
			in.Program, in.ProgramID = r.top(in.Argv[0])
			r.argv(in.Argv, in.Env, 0)
		}
		in.Commands, in.Dynamic = r.commands, r.dynamic
	case aci.VerbLaunchApp:
		if a.App == nil {
			return protocol.PermissionRequest{}, fmt.Errorf("gate: a launch_app without an app")
		}
		tool = protocol.ToolLaunchApp
		in = protocol.ArgvCommand(append([]string{*a.App}, a.Args...))
		r := newReader(env, nil, "")
		in.Program, in.ProgramID = r.top(in.Argv[0])
		r.argv(in.Argv, nil, 0)
		in.Commands, in.Dynamic = r.commands, r.dynamic
	default:
		return protocol.PermissionRequest{}, fmt.Errorf("gate: %s is not a verb the gate judges", req.Verb)
	}
	return protocol.PermissionRequest{ID: id, Kind: protocol.KindCommand, Tool: tool, Input: in.Map()}, nil
}

// Authorize implements shinken.Authorizer: it publishes
// request.permission, asks the plugins, publishes request.answered, and
// returns nil for an allow, else an error matching protocol.ErrRefused,
// worded by the deciding plugin. A Host's error (an unknown project) is
// returned as it is, and refuses too.
func (g *Gate) Authorize(ctx context.Context, req shinken.AuthRequest) error {
	preq, err := request(req, "shinken-"+strconv.FormatUint(g.seq.Add(1), 10), g.env)
	if err != nil {
		return err
	}
	about := escouade.About{Project: g.project}
	if _, err := g.host.Fact(ctx, "request.permission", map[string]any{"request": preq}, about); err != nil {
		g.log.Warn("fact not published", "fact", "request.permission", "err", err)
	}
	d, err := g.host.Decide(ctx, preq, about)
	if err != nil {
		return err
	}
	if g.decided != nil {
		g.decided(preq, d)
	}
	verdict := d.Verdict
	if verdict == protocol.Ask {
		verdict = g.onAsk
	}
	if _, err := g.host.Fact(ctx, "request.answered", map[string]any{
		"id": preq.ID, "decision": string(verdict), "message": d.Message, "plugin": d.Plugin,
	}, about); err != nil {
		g.log.Warn("fact not published", "fact", "request.answered", "err", err)
	}
	g.log.Info("permission", "tool", preq.Tool, "command", preq.Input["command"], "verdict", verdict, "plugin", d.Plugin)
	if verdict == protocol.Allow {
		return nil
	}
	return &refusedError{Request: preq, Decision: d}
}

// shownStdin returns the standard input a request shows: its first
// protocol.MaxStdinShown bytes, cut before a character that would not fit
// whole, and whether it was cut.
func shownStdin(s string) (string, bool) {
	if len(s) <= protocol.MaxStdinShown {
		return s, false
	}
	end := protocol.MaxStdinShown
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end], true
}
