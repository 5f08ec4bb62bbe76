package guard

import (
	"fmt"
	"strings"
	"unicode"

	"shinken.dev/go/escouade/protocol"
)

// builtins are the shell builtins a line may use, each with its rule:
// those that run nothing and change no later word. Those left out run a
// line or a file (eval, source, ., exec, trap, fc), change what a word
// runs (alias, hash, enable, builtin), or reach other processes (kill):
// a line that uses one is refused. Each is a builtin of dash and bash
// alike.
var builtins = map[string]func(*Guard, []string) (protocol.Verdict, string){
	":": allowAll, "true": allowAll, "false": allowAll, "echo": allowAll, "pwd": allowAll,
	"test": allowAll, "[": allowAll, "shift": allowAll, "exit": allowAll, "return": allowAll,
	"break": allowAll, "continue": allowAll, "wait": allowAll, "times": allowAll, "jobs": allowAll,
	"type": allowAll, "umask": allowAll, "cd": allowAll, "unset": allowAll,
	"printf":   builtinPrintf,
	"export":   builtinExport,
	"readonly": builtinShellVars,
	"local":    builtinShellVars,
	"read":     builtinShellVars,
	"getopts":  builtinGetopts,
	"set":      builtinSet,
	"command":  builtinCommand,
}

func allowAll(*Guard, []string) (protocol.Verdict, string) { return protocol.Allow, "" }

// builtinPrintf refuses printf -v, which sets a variable (PATH) in bash.
func builtinPrintf(_ *Guard, argv []string) (protocol.Verdict, string) {
	if len(argv) > 1 && strings.HasPrefix(argv[1], "-v") {
		return protocol.Deny, "printf -v sets a variable of the shell"
	}
	return protocol.Allow, ""
}

// builtinExport allows exporting the variables of Policy.Env, and no
// option but -p (export -f exports a function: code for every bash child).
func builtinExport(g *Guard, argv []string) (protocol.Verdict, string) {
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			if a == "-p" || a == "--" {
				continue
			}
			return protocol.Deny, fmt.Sprintf("%s %s is not an option the guard allows", argv[0], a)
		}
		name, _, _ := strings.Cut(a, "=")
		if !g.envAllowed(name) {
			return protocol.Deny, fmt.Sprintf("%s %s sets a variable the guard does not allow (Policy.Env)", argv[0], name)
		}
	}
	return protocol.Allow, ""
}

// builtinShellVars allows setting a shell's own variables (readonly,
// local, read) when they are the line's own: a name with a lowercase
// letter (every variable a shell reads itself, PATH, IFS, PS4, ENV, is
// upper case), or one of Policy.Env.
func builtinShellVars(g *Guard, argv []string) (protocol.Verdict, string) {
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") {
			if argv[0] == "read" || a == "--" {
				continue // read's options: -r, -p prompt, -d delimiter…
			}
			return protocol.Deny, fmt.Sprintf("%s %s is not an option the guard allows", argv[0], a)
		}
		name, _, _ := strings.Cut(a, "=")
		if !validName(name) {
			continue // read's option values
		}
		if !g.shellVar(name) {
			return protocol.Deny, fmt.Sprintf("%s sets %s, a variable the shell itself may read", argv[0], name)
		}
	}
	return protocol.Allow, ""
}

func builtinGetopts(g *Guard, argv []string) (protocol.Verdict, string) {
	if len(argv) < 3 || !g.shellVar(argv[2]) {
		return protocol.Deny, "getopts sets a variable the shell itself may read"
	}
	return protocol.Allow, ""
}

// shellVar reports whether a line may set the shell variable name.
func (g *Guard) shellVar(name string) bool {
	return strings.IndexFunc(name, unicode.IsLower) >= 0 || g.envAllowed(name)
}

func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if r != '_' && (r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// setOptions are the set options a line may change: none of them runs
// code (-x would run PS4, -a exports every variable set after it).
var setOptions = map[string]bool{
	"errexit": true, "nounset": true, "pipefail": true, "noglob": true, "noclobber": true, "notify": true,
}

// builtinSet allows set with the options -e -u -f -C -b (and their
// names under -o), and set -- words (the positional parameters).
func builtinSet(_ *Guard, argv []string) (protocol.Verdict, string) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return protocol.Allow, ""
		case a == "-o" || a == "+o":
			if i+1 < len(argv) && setOptions[argv[i+1]] {
				i++
				continue
			}
			return protocol.Deny, "set -o with no option, or one the guard does not allow"
		case len(a) > 2 && (a[0] == '-' || a[0] == '+') && strings.HasSuffix(a, "o") && strings.Trim(a[1:len(a)-1], "eufCb") == "":
			if i+1 < len(argv) && setOptions[argv[i+1]] {
				i++ // set -euo pipefail
				continue
			}
			return protocol.Deny, "set -o with no option, or one the guard does not allow"
		case len(a) > 1 && (a[0] == '-' || a[0] == '+') && strings.Trim(a[1:], "eufCb") == "":
			continue
		default:
			return protocol.Deny, fmt.Sprintf("set %s is not an option the guard allows", a)
		}
	}
	return protocol.Allow, ""
}

// builtinCommand allows command -v and -V (they run nothing) and command
// with no option (the command it runs is shown, and judged, after it).
func builtinCommand(_ *Guard, argv []string) (protocol.Verdict, string) {
	if len(argv) > 1 && strings.HasPrefix(argv[1], "-") && argv[1] != "-v" && argv[1] != "-V" {
		return protocol.Deny, fmt.Sprintf("command %s is not an option the guard allows", argv[1])
	}
	return protocol.Allow, ""
}
