package guard

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"shinken.dev/go/escouade/protocol"
)

// command judges a request to run a program: every simple command the
// gate shows must be allowed, and the request itself neither dynamic nor
// interactive (unless the Policy says otherwise).
func (g *Guard) command(in protocol.CommandInput, typed bool) (protocol.Verdict, string) {
	for name := range in.Env {
		if !g.envAllowed(name) {
			return protocol.Deny, fmt.Sprintf("the request sets %s, which the guard does not allow (Policy.Env)", name)
		}
	}
	if in.Interactive {
		if g.inter != protocol.Allow {
			return g.inter, "an interactive shell runs what is typed into it, which no request shows yet"
		}
		return protocol.Allow, ""
	}
	if in.Dynamic {
		why := "the line is dynamic: " + dynamicPart(in)
		if typed {
			why += " (or typed at a shell as is, to whatever reads its terminal: a line is judged only when typed at the shell's prompt)"
		}
		return g.dynamic, why
	}
	if len(in.Commands) == 0 {
		return protocol.Deny, "the gate shows no command the request runs"
	}
	cmds := in.Commands
	for _, c := range cmds {
		if len(c.Argv) > 0 && (c.Argv[0] == "cd" || c.Argv[0] == "pushd" || c.Argv[0] == "popd") {
			in.Cwd = "" // a relative path is then relative to a folder the request does not show
		}
	}
	if isShellForm(in) {
		if v, why := g.lineWrites(in.Command, in.Cwd, typed); v != protocol.Allow {
			return v, why
		}
	} else {
		// An argv runs its program word for word, never a shell's
		// builtin: judge it as the program it names.
		if len(in.Argv) == 0 {
			return protocol.Deny, "the request runs no program"
		}
		top := protocol.SimpleCommand{Argv: in.Argv, Program: in.Program, ProgramID: in.ProgramID}
		if v, why := g.program(top, in.Cwd); v != protocol.Allow {
			return v, why
		}
		if slices.Equal(cmds[0].Argv, in.Argv) {
			if v, why := g.around(cmds[0], in.Cwd); v != protocol.Allow {
				return v, why
			}
			cmds = cmds[1:]
		}
	}
	verdict, message := protocol.Allow, ""
	for _, c := range cmds {
		v, why := g.simple(c, in.Cwd)
		switch v {
		case protocol.Deny:
			return v, why
		case protocol.Ask:
			if verdict == protocol.Allow {
				verdict, message = v, why
			}
		}
	}
	return verdict, message
}

// isShellForm reports whether in is a shell line run by the runtime's
// own /bin/sh -c, whose line's commands are all the gate shows.
func isShellForm(in protocol.CommandInput) bool {
	return len(in.Argv) == 3 && in.Argv[0] == "/bin/sh" && in.Argv[1] == "-c" && in.Argv[2] == in.Command
}

// simple judges one simple command: its variables, its redirections,
// and its program (or builtin) with its arguments.
func (g *Guard) simple(c protocol.SimpleCommand, cwd string) (protocol.Verdict, string) {
	if len(c.Argv) == 0 {
		return protocol.Deny, "a command with no words"
	}
	if v, why := g.around(c, cwd); v != protocol.Allow {
		return v, why
	}
	if c.Program == "" && !strings.Contains(c.Argv[0], "/") {
		if rule, ok := builtins[c.Argv[0]]; ok {
			return rule(g, c.Argv)
		}
	}
	return g.program(c, cwd)
}

// around judges what a command sets and where it writes.
func (g *Guard) around(c protocol.SimpleCommand, cwd string) (protocol.Verdict, string) {
	for name := range c.Env {
		if !g.envAllowed(name) {
			return protocol.Deny, fmt.Sprintf("%s sets %s, which the guard does not allow (Policy.Env)", c.Argv[0], name)
		}
	}
	for _, r := range c.Redirects {
		if v, why := g.redirect(r, cwd); v != protocol.Allow {
			return v, why
		}
	}
	return protocol.Allow, ""
}

// program judges a command that runs a program file.
func (g *Guard) program(c protocol.SimpleCommand, cwd string) (protocol.Verdict, string) {
	name := c.Argv[0]
	if c.Program == "" {
		return protocol.Deny, fmt.Sprintf("%s is not found, or not a program the guard knows", name)
	}
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		return protocol.Deny, fmt.Sprintf("%s is named by a relative path, which a cd can change", name)
	}
	var id protocol.FileID
	real := c.Program
	if c.ProgramID != nil {
		id = *c.ProgramID
	} else {
		var err error
		if real, id, err = g.programs.identity(c.Program); err != nil {
			return protocol.Deny, fmt.Sprintf("%s (%s) cannot be identified: %v", name, c.Program, err)
		}
	}
	if g.shell != nil && sameFile(id, *g.shell) && len(c.Argv) == 3 && c.Argv[1] == "-c" {
		return g.lineWrites(c.Argv[2], cwd, false) // the line's own commands follow, each judged
	}
	p := g.programs.match(id)
	if p == nil {
		return protocol.Deny, fmt.Sprintf("%s (%s, sha256 %s) is not on the allowlist", name, real, short(id.SHA256))
	}
	base := filepath.Base(name)
	if !p.names[base] {
		return protocol.Deny, fmt.Sprintf("%s runs %s under another name (a program may act by its name)", name, p.path)
	}
	rule := g.rules[p.rule]
	if p.names[base] && base != p.rule {
		if r, ok := g.rules[base]; ok {
			rule = r
		}
	}
	if rule == nil {
		return protocol.Allow, ""
	}
	v, why := rule(c.Argv)
	switch v {
	case protocol.Allow:
		return v, ""
	case protocol.Ask:
		return v, base + ": " + why
	}
	return protocol.Deny, base + ": " + why
}

func sameFile(a, b protocol.FileID) bool {
	return a.SHA256 == b.SHA256 && a.Dev == b.Dev && a.Ino == b.Ino
}

// writeOps are the redirections that write their target.
var writeOps = map[string]bool{">": true, ">>": true, ">|": true, "<>": true, "&>": true, "&>>": true}

// harmless are the files a redirection may always write.
var harmless = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

// redirect judges a redirection: one that writes a file is an edit of it.
func (g *Guard) redirect(r protocol.Redirect, cwd string) (protocol.Verdict, string) {
	write := writeOps[r.Op]
	if r.Op == ">&" && r.Target != "-" && strings.Trim(r.Target, "0123456789") != "" {
		write = true // >& file is &> file
	}
	if !write || harmless[r.Target] {
		return protocol.Allow, ""
	}
	path := r.Target
	if !filepath.IsAbs(path) {
		if cwd == "" || !filepath.IsAbs(cwd) {
			return protocol.Deny, fmt.Sprintf("%s %s writes a relative path, and the request names no folder", r.Op, r.Target)
		}
		path = filepath.Join(cwd, path)
	}
	if v, why := g.edit(path); v != protocol.Allow {
		return v, fmt.Sprintf("%s %s: %s", r.Op, r.Target, why)
	}
	return protocol.Allow, ""
}

// dynamicPart names what makes a request dynamic, as far as it shows.
func dynamicPart(in protocol.CommandInput) string {
	for _, c := range in.Commands {
		words := slices.Clone(c.Argv)
		for _, v := range c.Env {
			words = append(words, v)
		}
		for _, r := range c.Redirects {
			words = append(words, r.Target)
		}
		for _, w := range words {
			for _, mark := range []string{"$(", "`", "${", "$", "*", "?", "[", "~"} {
				if strings.Contains(w, mark) {
					return fmt.Sprintf("%q is known only when it runs", w)
				}
			}
		}
	}
	if in.Stdin != "" {
		return "what runs comes on its standard input"
	}
	return "the gate cannot see all it runs"
}
