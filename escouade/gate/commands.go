package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"shinken.dev/go/escouade/protocol"
)

// What runs, shown to the guards (protocol.CommandInput's Program,
// Commands and Dynamic): a guard that matches the start of input.command
// is fooled by "bash -c 'rm …'", "\rm" or "env rm", and one that reads
// argv[0] by a PATH the agent set to a folder it wrote. The gate reads a
// shell line with a real shell parser (mvdan.cc/sh, POSIX), looks into
// the wrappers that run another command, and finds each program on the
// PATH it will be found on.

// defaultPath is searched when the environment has no PATH, as the
// runtime's executor and a POSIX shell do.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// maxNesting bounds how deeply sh -c lines and wrappers are looked into.
const maxNesting = 8

// shellBuiltins are the commands a POSIX shell runs itself: no program.
var shellBuiltins = map[string]bool{
	":": true, ".": true, "[": true, "alias": true, "bg": true, "break": true, "cd": true, "command": true,
	"continue": true, "echo": true, "eval": true, "exec": true, "exit": true, "export": true, "false": true,
	"fc": true, "fg": true, "getopts": true, "hash": true, "jobs": true, "kill": true, "local": true,
	"printf": true, "pwd": true, "read": true, "readonly": true, "return": true, "set": true, "shift": true,
	"source": true, "test": true, "times": true, "trap": true, "true": true, "type": true, "ulimit": true,
	"umask": true, "unalias": true, "unset": true, "wait": true,
}

// shells are the programs whose -c runs a line.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// opaque are the commands that run what is known only when they run.
var opaque = map[string]bool{"eval": true, "source": true, ".": true, "xargs": true, "parallel": true}

// reader gathers the commands of one request. Of the environment, only
// PATH finds anything: it is all the reader keeps.
type reader struct {
	path     string // the PATH programs are found on
	cwd      string
	commands []protocol.SimpleCommand
	dynamic  bool
}

// newReader starts from the PATH of base (KEY=value lines, the last one
// winning), or over's when it sets one.
func newReader(base []string, over map[string]string, cwd string) *reader {
	path, found := defaultPath, false
	for i := len(base) - 1; i >= 0 && !found; i-- {
		path, found = strings.CutPrefix(base[i], "PATH=")
	}
	if !found {
		path = defaultPath
	}
	if p, ok := over["PATH"]; ok {
		path = p
	}
	return &reader{path: path, cwd: cwd}
}

// program finds name as execve would be given it: a name with a slash as
// it is (under cwd when relative), another on path, absolute folders only.
func (r *reader) program(name, path string) string {
	if name == "" {
		return ""
	}
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) && r.cwd != "" {
			name = filepath.Join(r.cwd, name)
		}
		return filepath.Clean(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// argv adds the command argv, run with the variables own set for it
// alone, and what it runs in turn.
func (r *reader) argv(argv []string, own map[string]string, depth int) {
	if len(argv) == 0 {
		return
	}
	if depth > maxNesting {
		r.dynamic = true
		return
	}
	path := r.path
	if p, ok := own["PATH"]; ok {
		path = p
	}
	c := protocol.SimpleCommand{Argv: argv, Env: own}
	if !shellBuiltins[argv[0]] {
		c.Program = r.program(argv[0], path)
	}
	r.commands = append(r.commands, c)
	name := filepath.Base(argv[0])
	if opaque[name] {
		r.dynamic = true
		return
	}
	if shells[name] {
		r.shellArgs(argv[1:], path, depth)
		return
	}
	if inner, innerEnv, ok := unwrap(name, argv[1:]); ok {
		merged := own
		if len(innerEnv) > 0 {
			merged = make(map[string]string, len(own)+len(innerEnv))
			for k, v := range own {
				merged[k] = v
			}
			for k, v := range innerEnv {
				merged[k] = v
			}
		}
		r.argv(inner, merged, depth+1)
	}
}

// shellArgs looks for the line of a shell's -c among its arguments.
func (r *reader) shellArgs(args []string, path string, depth int) {
	for i, a := range args {
		switch {
		case a == "-c" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'c')):
			if i+1 >= len(args) {
				return
			}
			saved := r.path
			r.path = path
			r.line(args[i+1], depth+1)
			r.path = saved
			return
		case a == "-o" || a == "+o":
			continue // its option's name follows
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			continue
		default:
			// A script file, or standard input: what runs is in a file.
			r.dynamic = true
			return
		}
	}
	r.dynamic = true // the commands come on standard input
}

// unwrap returns the command a wrapper runs, and the variables it sets
// for it, or false when name is no wrapper.
func unwrap(name string, args []string) ([]string, map[string]string, bool) {
	skip := func(withValue ...string) []string {
		for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
			a := args[0]
			args = args[1:]
			if a == "--" {
				break
			}
			if slices.Contains(withValue, a) && len(args) > 0 {
				args = args[1:]
			}
		}
		return args
	}
	switch name {
	case "env":
		env := map[string]string{}
		rest := skip("-u", "--unset", "-C", "--chdir", "-S", "--split-string")
		for len(rest) > 0 {
			k, v, ok := strings.Cut(rest[0], "=")
			if !ok || !syntax.ValidName(k) {
				break
			}
			env[k] = v
			rest = rest[1:]
		}
		return rest, env, len(rest) > 0
	case "command", "exec", "nohup", "setsid", "time", "builtin":
		rest := skip("-a")
		return rest, nil, len(rest) > 0
	case "nice":
		rest := skip("-n", "--adjustment")
		return rest, nil, len(rest) > 0
	case "stdbuf":
		rest := skip("-i", "-o", "-e", "--input", "--output", "--error")
		return rest, nil, len(rest) > 0
	case "timeout":
		rest := skip("-s", "--signal", "-k", "--kill-after")
		if len(rest) > 1 {
			return rest[1:], nil, true // past the duration
		}
	case "sudo", "doas":
		rest := skip("-u", "--user", "-g", "--group", "-C", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user")
		return rest, nil, len(rest) > 0
	}
	return nil, nil, false
}

// line adds the commands of a shell line.
func (r *reader) line(src string, depth int) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), "")
	if err != nil {
		r.dynamic = true // the shell may read it otherwise, or refuse it
		return
	}
	for n := range syntax.Preorder(f) {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			continue
		}
		own := map[string]string{}
		for _, as := range call.Assigns {
			v, known := r.word(as.Value)
			if as.Name == nil || as.Index != nil || as.Array != nil || as.Append {
				r.dynamic = true
				continue
			}
			own[as.Name.Value] = v
			if !known {
				r.dynamic = true
			}
		}
		var argv []string
		for _, w := range call.Args {
			v, known := r.word(w)
			if !known {
				r.dynamic = true
			}
			argv = append(argv, v)
		}
		if len(argv) == 0 {
			// Assignments alone set the shell's own variables, for
			// the commands after them.
			if p, ok := own["PATH"]; ok {
				r.path = p
			}
			continue
		}
		if argv[0] == "export" || argv[0] == "readonly" {
			for _, a := range argv[1:] {
				if v, ok := strings.CutPrefix(a, "PATH="); ok {
					r.path = v
				}
			}
		}
		if len(own) == 0 {
			own = nil
		}
		r.argv(argv, own, depth)
	}
}

// word returns a word as the shell reads it, and whether that is known
// before it runs; an expansion is given as written.
func (r *reader) word(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	known := true
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				known = false // a glob, a tilde: expanded when it runs
			}
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				known = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
					continue
				}
				known = false
				b.WriteString(source(dp))
			}
		default:
			known = false
			b.WriteString(source(part))
		}
	}
	return b.String(), known
}

// unescape removes the backslashes a shell removes: before any character
// outside quotes, before $ ` " \ and a newline inside double quotes.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			switch {
			case n == '\n':
				i++
				continue
			case !quoted || strings.IndexByte("$`\"\\", n) >= 0:
				b.WriteByte(n)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// source prints a part of a word as written.
func source(n syntax.Node) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, n)
	return b.String()
}
