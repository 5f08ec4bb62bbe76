package gate

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// posixBuiltins are the commands dash runs itself: no program.
var posixBuiltins = set(". : [ alias bg break cd chdir command continue echo eval exec exit export false fg " +
	"getopts hash jobs kill local printf pwd read readonly return set shift test times trap true type " +
	"ulimit umask unalias unset wait")

// bashBuiltins are bash's and mksh's, dash's included.
var bashBuiltins = set(". : [ alias bg bind break builtin caller cd command compgen complete compopt continue " +
	"declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill " +
	"let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source " +
	"suspend test times trap true type typeset ulimit umask unalias unset wait print whence")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// builtins are the commands the shell of lang runs itself.
func builtins(lang syntax.LangVariant) map[string]bool {
	if lang == syntax.LangPOSIX {
		return posixBuiltins
	}
	return bashBuiltins
}

// shellLang returns the variant of the shell p is, run under the name
// argv0, or false when the gate has no parser for it: a shell it does not
// know, or one run under a name that changes how it reads (rbash).
func shellLang(argv0 string, p prog) (syntax.LangVariant, bool) {
	name := filepath.Base(argv0)
	switch real := filepath.Base(p.path); {
	case real == "dash" && (name == "sh" || name == "dash"):
		return syntax.LangPOSIX, true
	case real == "bash" && (name == "sh" || name == "bash"):
		return syntax.LangBash, true
	case (real == "mksh" || real == "lksh") && (name == "sh" || name == real):
		return syntax.LangMirBSDKorn, true
	}
	return 0, false
}

// safeShellOptions are the set -o options that change nothing of what
// runs.
var safeShellOptions = set("errexit nounset pipefail noglob xtrace verbose noclobber allexport posix " +
	"notify noexec monitor ignoreeof nolog emacs vi errtrace functrace hashall braceexpand physical")

// builtin reads a builtin of the shell: those that change what a later
// word runs, or run a line, make the request dynamic; those that run a
// command (command, exec, builtin) add it.
func (r *reader) builtin(c call) {
	name, args := c.argv[0], c.argv[1:]
	if r.lang != syntax.LangPOSIX {
		// bash evaluates an array's subscript as arithmetic, command
		// substitutions included, wherever a builtin takes a name
		// (printf -v, read, test -v, declare -i…).
		for _, a := range args {
			if name != "echo" && name != "printf" && strings.ContainsAny(a, "$`") {
				r.dynamic = true
			}
		}
	}
	switch name {
	case "eval", "source", ".", "fc", "bind", "complete", "compgen", "compopt", "enable", "shopt",
		"mapfile", "readarray", "let", "print", "whence":
		r.dynamic = true
	case "alias":
		for _, a := range args {
			if strings.Contains(a, "=") {
				r.dynamic = true // a word that runs another line
			}
		}
	case "hash":
		for _, a := range args {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "p") {
				r.dynamic = true // binds a name to any file
			}
		}
	case "trap":
		if len(args) >= 2 && args[0] != "-" && args[0] != "" && !isNumber(args[0]) {
			r.dynamic = true // its action is a line
		}
	case "set":
		r.setOptions(args)
	case "read", "getopts", "unset", "export", "readonly", "local", "declare", "typeset", "printf", "test", "[":
		r.names(name, args)
	case "command":
		rest, ok := getopt(args, "pvV", nil, func(o, _ string) bool {
			if o == "p" {
				return false // the default PATH, not the line's
			}
			if o == "v" || o == "V" {
				args = nil // looks up, runs nothing
			}
			return true
		})
		if !ok {
			r.dynamic = true
			return
		}
		if args != nil {
			r.command(call{argv: rest, own: c.own, path: c.path, inLine: true, depth: c.depth + 1})
		}
	case "builtin":
		r.command(call{argv: args, own: c.own, path: c.path, inLine: true, depth: c.depth + 1})
	case "exec":
		rest, ok := getopt(args, "cla:", nil, nil)
		if !ok {
			r.dynamic = true
			return
		}
		r.command(call{argv: rest, own: c.own, path: c.path, depth: c.depth + 1})
	}
}

// setOptions reads set's arguments: an option that changes what runs
// (set -o with one the gate does not list, bash's -k) makes the request
// dynamic.
func (r *reader) setOptions(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || (a[0] != '-' && a[0] != '+') {
			return
		}
		if a == "-o" || a == "+o" {
			if i+1 < len(args) && !safeShellOptions[args[i+1]] {
				r.dynamic = true
			}
			i++
			continue
		}
		if strings.ContainsAny(a[1:], "ko") {
			r.dynamic = true
		}
	}
}

// names reads the variable names a builtin sets: PATH and the variables
// that run code make the request dynamic, unless PATH is given a value
// the gate reads (export PATH=/usr/bin).
func (r *reader) names(name string, args []string) {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			if name == "test" || name == "[" {
				if a == "-v" || a == "-R" {
					r.dynamic = true
				}
				continue
			}
			if name == "declare" || name == "typeset" || name == "local" || name == "export" || name == "readonly" {
				if strings.ContainsAny(a, "nfi") {
					r.dynamic = true // namerefs, functions, arithmetic values
				}
			}
			continue
		}
		if name == "test" || name == "[" || (name == "printf" && (i == 0 || args[i-1] != "-v")) {
			continue
		}
		k, v, hasValue := strings.Cut(a, "=")
		if strings.Contains(k, "[") {
			r.dynamic = true
		}
		switch {
		case k == "PATH" && (name == "export" || name == "readonly" || name == "declare" || name == "typeset"):
			if strings.Contains(v, "~") {
				r.dynamic = true
			}
			if hasValue {
				r.path = v
			}
		case setsPath(k):
			r.dynamic = true
		}
	}
}

func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
