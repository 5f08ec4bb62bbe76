package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

// A Policy is what a Guard allows. The zero Policy allows nothing.
type Policy struct {
	// Allow names the programs the agent may run: a name is found on Path,
	// a path is taken as it is; either is resolved, links followed, to its
	// real file, whose identity (device, inode, SHA-256) New pins. A name
	// that is not found fails New.
	Allow []string
	// Path is the PATH the names of Allow are found on; "" means this
	// process's, or, with none, /usr/local/bin:/usr/bin:/bin and their sbin.
	Path string
	// Rules are argument rules by program name (the base name of an Allow
	// entry), over DefaultRules: a rule here replaces the default one of
	// that name, and a nil rule lifts it.
	Rules map[string]ArgRule
	// Read are the folders whose files the agent's machine tools may read;
	// Write the folders they may read and change, and that a command's
	// redirection may write. Links are followed when New resolves them.
	Read, Write []string
	// Protected are the files no edit may change even inside Write, as
	// patterns (path.Match) matched against every run of a path's
	// components: ".git" protects every path through a folder or file
	// named .git, ".config/git" every one through .config then git. nil
	// means DefaultProtected (the Makefiles too when make is allowed).
	Protected []string
	// Env names the variables a request may set, in its env, before a
	// command (LANG=C sort) or with export, read and their kin; a name
	// ending in * is a prefix. nil means DefaultEnv.
	Env []string
	// OnDynamic is the verdict on a request some of which is known only
	// when it runs (input.dynamic): protocol.Deny ("" too) or protocol.Ask.
	OnDynamic protocol.Verdict
	// Apps are the applications launch_app may start by name, whatever
	// their arguments: a desktop's own (the headless desktop's "notes",
	// "form" and "settings"), or a program trusted with any argument. A
	// launch_app of any other name is judged as the command it runs.
	Apps []string
	// OnInteractive is the verdict on starting an interactive shell
	// (input.interactive), whose lines are each judged when typed:
	// protocol.Deny ("" too), protocol.Ask or protocol.Allow. Allow needs
	// TypedAtPrompt.
	OnInteractive protocol.Verdict
	// TypedAtPrompt says that the runtime the guard judges for types a
	// line at an interactive shell only when the shell itself will read
	// it as a command line (no program it started in the terminal's
	// foreground, no line typed before unread, one line at a time), and
	// shows text typed otherwise as dynamic. Shinken's runtime does so
	// for its shell tool's lines (machine.ShellOptions.Lines). Without
	// it, a line judged as a command could reach a pager, an editor or
	// any program that reads the terminal, so OnInteractive may not be
	// Allow. Default false.
	TypedAtPrompt bool
}

// DefaultEnv are the variables a request may set by default: locale,
// terminal and colour settings, none of which makes a program run code.
var DefaultEnv = []string{
	"LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
	"COLUMNS", "LINES", "CI", "TMPDIR", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
}

// DefaultProtected are the files that programs read as code or as
// settings that run code, which no edit may change even in a Write root:
// a shell's start-up files, git's configuration and hooks (a folder or
// file named .git, a HEAD that makes its folder a repository to git),
// ssh's folder, the desktop's autostart and file associations (what
// xdg-open runs), Python's start-up hooks, the editors' rc files, and the
// machine tools' own folders (a shell's or a background command's: what
// is written to their fifos is typed at the shell or the command,
// unjudged).
var DefaultProtected = []string{
	"shinken-shell.*", "shinken-cmd.*",
	".git", "HEAD", ".gitconfig", ".config/git", ".ssh", ".gnupg",
	".profile", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".inputrc",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".envrc",
	".config/autostart", ".config/mimeapps.list", ".local/share/applications", ".mailcap",
	".xinitrc", ".xsession", ".xsessionrc", ".xprofile", ".pam_environment",
	"*.pth", "sitecustomize.py", "usercustomize.py", ".vimrc", ".exrc", ".npmrc",
}

// makefiles are protected too when make is allowed: they are its code.
var makefiles = []string{"Makefile", "makefile", "GNUmakefile", "*.mk"}

// A Guard judges permission requests by its Policy. It is safe for
// concurrent use.
type Guard struct {
	programs   *programs
	rules      map[string]ArgRule
	readRoots  []string
	writeRoots []string
	protected  []string
	env        []string
	dynamic    protocol.Verdict
	inter      protocol.Verdict
	shell      *protocol.FileID // the runtime's /bin/sh, whose -c runs the line the gate shows
	apps       []string
}

// New returns a Guard for p, its programs and folders resolved now: a
// program updated afterwards (a new file) is refused until a new Guard
// is made. A nil p allows nothing.
func New(p *Policy) (*Guard, error) {
	var o Policy
	if p != nil {
		o = *p
	}
	switch o.OnDynamic {
	case "":
		o.OnDynamic = protocol.Deny
	case protocol.Deny, protocol.Ask:
	default:
		return nil, fmt.Errorf("guard: Policy.OnDynamic %q: want deny or ask", o.OnDynamic)
	}
	switch o.OnInteractive {
	case "":
		o.OnInteractive = protocol.Deny
	case protocol.Deny, protocol.Ask:
	case protocol.Allow:
		if !o.TypedAtPrompt {
			return nil, errors.New("guard: Policy.OnInteractive allow needs Policy.TypedAtPrompt: a line judged as a command must reach the shell only when it reads it as one, not a program it started")
		}
	default:
		return nil, fmt.Errorf("guard: Policy.OnInteractive %q: want deny, ask or allow", o.OnInteractive)
	}
	path := o.Path
	if path == "" {
		path = os.Getenv("PATH")
	}
	if path == "" {
		path = defaultPath
	}
	progs, err := allow(o.Allow, path)
	if err != nil {
		return nil, err
	}
	g := &Guard{programs: progs, dynamic: o.OnDynamic, inter: o.OnInteractive, env: o.Env, apps: slices.Clone(o.Apps)}
	if g.env == nil {
		g.env = DefaultEnv
	}
	g.rules = make(map[string]ArgRule, len(DefaultRules)+len(o.Rules))
	for name, r := range DefaultRules {
		g.rules[name] = r
	}
	for name, r := range o.Rules {
		if r == nil {
			delete(g.rules, name)
			continue
		}
		g.rules[name] = r
	}
	g.protected = o.Protected
	if g.protected == nil {
		g.protected = slices.Clone(DefaultProtected)
		if progs.named("make") || progs.named("gmake") {
			g.protected = append(g.protected, makefiles...)
		}
	}
	for _, pat := range g.protected {
		if _, err := matchRun(pat, []string{"x"}); err != nil {
			return nil, fmt.Errorf("guard: Policy.Protected %q: %w", pat, err)
		}
	}
	if g.readRoots, err = roots("Read", o.Read); err != nil {
		return nil, err
	}
	if g.writeRoots, err = roots("Write", o.Write); err != nil {
		return nil, err
	}
	for _, prog := range progs.bySHA {
		if under(prog.path, g.writeRoots) {
			return nil, fmt.Errorf("guard: Policy.Allow: %s is in a Write root: the agent could change it between a judgment and its run", prog.path)
		}
	}
	if _, id, err := identify("/bin/sh"); err == nil {
		g.shell = &id
	}
	return g, nil
}

// roots resolves folders to their real paths.
func roots(field string, dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("guard: Policy.%s %q is not an absolute path", field, d)
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, fmt.Errorf("guard: Policy.%s: %w", field, err)
		}
		out = append(out, real)
	}
	return out, nil
}

// Judge returns the Guard's decision on r. Kinds other than command,
// read and edit are refused: an allowlist allows only what it knows.
func (g *Guard) Judge(r protocol.PermissionRequest) protocol.Decision {
	var v protocol.Verdict
	var why string
	switch r.Kind {
	case protocol.KindCommand:
		in, err := r.Command()
		if err != nil {
			return deny("the request cannot be read: " + err.Error())
		}
		if r.Tool == protocol.ToolLaunchApp && len(in.Argv) > 0 && slices.Contains(g.apps, in.Argv[0]) {
			return protocol.Decision{Verdict: protocol.Allow}
		}
		v, why = g.command(in, r.Tool == protocol.ToolShell)
	case protocol.KindRead, protocol.KindEdit:
		v, why = g.fileRequest(r)
	default:
		return deny(fmt.Sprintf("a request of kind %q is not one the guard allows", r.Kind))
	}
	return protocol.Decision{Verdict: v, Message: why}
}

// Decide answers the Host's permissions/decide with Judge: it is a
// plugin.Handlers' Decide, so plugin.Handlers{Decide: g.Decide} is the
// Guard as a plugin.
func (g *Guard) Decide(_ context.Context, _ *plugin.Conn, p protocol.DecideParams) (protocol.Decision, error) {
	return g.Judge(p.Request), nil
}

func deny(why string) protocol.Decision {
	return protocol.Decision{Verdict: protocol.Deny, Message: why}
}

// envAllowed reports whether a request may set the variable name.
func (g *Guard) envAllowed(name string) bool {
	for _, e := range g.env {
		if p, ok := strings.CutSuffix(e, "*"); ok && strings.HasPrefix(name, p) || e == name {
			return true
		}
	}
	return false
}
