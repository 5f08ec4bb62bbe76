package guard

import (
	"fmt"
	"strings"

	"shinken.dev/go/escouade/protocol"
)

// An ArgRule judges the arguments of an allowed program: argv is the
// command's words, argv[0] included, as the gate shows them. It returns
// protocol.Allow, or protocol.Ask or protocol.Deny and why (the Guard
// prefixes the program's name).
type ArgRule func(argv []string) (protocol.Verdict, string)

// DefaultRules are the argument rules a Guard applies unless
// Policy.Rules replaces them, by program name. Each keeps a program that
// can run other programs, or write files the Guard cannot see, to its
// harmless uses:
//
//   - find: no -exec, -execdir, -ok, -okdir, -delete, -fprint, -fprint0,
//     -fprintf, -fls (they run programs, delete or write files).
//   - git: no -c, --config-env, --exec-path, -C, --git-dir, --work-tree
//     (they run configured code or point git at a configuration the agent
//     wrote); the subcommands that read (status, log, diff, show, grep
//     without -O, blame…), add and commit are allowed; config only to read
//     it; those that change the work tree or talk to a remote (checkout,
//     reset, push, clone, init…) ask; any other (an alias, difftool,
//     filter-branch…) is refused, and so is --output (a file written).
//   - sed: a script the Guard reads whole and finds no e, w, W, r, R
//     command nor s///e or s///w in, and no -i, -f or --in-place.
//   - awk (gawk, mawk, nawk): a program with no system(), getline, pipe,
//     output redirection or @ directive, and no -f, -i, -l, -E.
//   - python, python3, perl, ruby, node, deno, bun, php, lua, tclsh, wish,
//     Rscript: asked unless the only argument is --version, -V or
//     --help (any other runs code the request does not show).
//   - make: asked unless it only prints its version (a Makefile is code).
//   - xargs, sudo, doas, su, and every shell (sh, bash, dash, zsh…,
//     other than the runtime's own sh -c, whose line is shown): refused.
//   - env: only -i, -0, -u NAME, -v (-S splits a line again), the
//     variables it sets judged on the command it runs; timeout and nohup
//     with no option, nice with -n N only, time with -p only (GNU time's
//     -o and -f take values a reader may take for the command); stdbuf
//     refused (it preloads a library).
//   - sort: no -o, --output, --compress-program; uniq and tee: no output
//     file.
var DefaultRules = map[string]ArgRule{
	"find": findRule, "git": gitRule, "sed": sedRule,
	"awk": awkRule, "gawk": awkRule, "mawk": awkRule, "nawk": awkRule,
	"make": makeRule, "gmake": makeRule,
	"xargs": denyRule("xargs runs commands it reads"),
	"sudo":  denyRule("it runs a command as another user"), "doas": denyRule("it runs a command as another user"),
	"su":  denyRule("it runs a command as another user"),
	"env": envRule, "timeout": timeoutRule, "nice": niceRule, "nohup": plainWrapper, "time": timeRule,
	"stdbuf": denyRule("it preloads a library into the program it runs"),
	"sort":   sortRule, "uniq": outputOperand(2, "uniq"), "tee": outputOperand(1, "tee"),
}

func init() {
	for _, name := range []string{"python", "python3", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "tclsh", "wish", "Rscript"} {
		DefaultRules[name] = interpreterRule
	}
	for _, name := range []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "fish", "tcsh", "csh", "busybox"} {
		DefaultRules[name] = denyRule("a shell runs lines the request may not show")
	}
}

func denyRule(why string) ArgRule {
	return func([]string) (protocol.Verdict, string) { return protocol.Deny, why }
}

// findRule refuses find's actions that run, delete or write.
func findRule(argv []string) (protocol.Verdict, string) {
	for _, a := range argv[1:] {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return protocol.Deny, a + " runs a program, deletes or writes a file"
		}
	}
	return protocol.Allow, ""
}

// makeRule allows make to say what it is, and asks about anything
// else: a Makefile runs what it says.
func makeRule(argv []string) (protocol.Verdict, string) {
	if len(argv) == 2 && (argv[1] == "--version" || argv[1] == "-v" || argv[1] == "--help") {
		return protocol.Allow, ""
	}
	return protocol.Ask, "a Makefile runs what it says"
}

// interpreterRule allows an interpreter to say what it is, and asks
// about anything else.
func interpreterRule(argv []string) (protocol.Verdict, string) {
	if len(argv) == 2 && (argv[1] == "--version" || argv[1] == "-V" || argv[1] == "--help") {
		return protocol.Allow, ""
	}
	return protocol.Ask, "it runs code the request does not show"
}

// envRule allows env's options that take no line nor folder: -i, -0,
// -u NAME, -v and their long forms. The variables it sets are shown on
// the command it runs, and judged there.
func envRule(argv []string) (protocol.Verdict, string) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--" || !strings.HasPrefix(a, "-") || a == "-":
			return protocol.Allow, ""
		case a == "-i" || a == "-0" || a == "-v" || a == "-iv" || a == "--ignore-environment" || a == "--null" || a == "--debug" || strings.HasPrefix(a, "--unset="):
		case a == "-u" || a == "--unset":
			i++
		default:
			return protocol.Deny, a + " is not an option the guard allows (-S splits a line the gate does not read)"
		}
	}
	return protocol.Allow, ""
}

// plainWrapper allows a wrapper with no option before its command.
func plainWrapper(argv []string) (protocol.Verdict, string) {
	if len(argv) > 1 && strings.HasPrefix(argv[1], "-") {
		return protocol.Deny, argv[1] + " is not an option the guard allows"
	}
	return protocol.Allow, ""
}

// timeRule allows time -p only (GNU time's -o and -f take values that
// a reader may take for the command).
func timeRule(argv []string) (protocol.Verdict, string) {
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			break
		}
		if a != "-p" {
			return protocol.Deny, a + " is not an option the guard allows"
		}
	}
	return protocol.Allow, ""
}

// timeoutRule allows timeout DURATION command, with no option.
func timeoutRule(argv []string) (protocol.Verdict, string) {
	return plainWrapper(argv)
}

// niceRule allows nice, or nice -n N, before the command.
func niceRule(argv []string) (protocol.Verdict, string) {
	if len(argv) > 1 && strings.HasPrefix(argv[1], "-") {
		if argv[1] == "-n" && len(argv) > 2 && strings.Trim(argv[2], "-0123456789") == "" {
			return protocol.Allow, ""
		}
		return protocol.Deny, argv[1] + " is not an option the guard allows"
	}
	return protocol.Allow, ""
}

// sortRule refuses sort's output file and compressor: -o and any long
// option that begins like --output or --compress-program.
func sortRule(argv []string) (protocol.Verdict, string) {
	for _, a := range argv[1:] {
		switch {
		case a == "--":
			return protocol.Allow, ""
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a[2:], "=")
			if name != "" && (strings.HasPrefix("output", name) || strings.HasPrefix("compress-program", name)) {
				return protocol.Deny, a + " writes a file or runs a program"
			}
		case strings.HasPrefix(a, "-") && strings.ContainsRune(a, 'o'):
			return protocol.Deny, a + " writes a file"
		}
	}
	return protocol.Allow, ""
}

// outputOperand refuses a program's operands past the first n-1 (uniq's
// second is its output file; tee's every one).
func outputOperand(n int, name string) ArgRule {
	return func(argv []string) (protocol.Verdict, string) {
		operands := 0
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") && a != "-" {
				continue
			}
			operands++
			if operands >= n {
				return protocol.Deny, fmt.Sprintf("%s writes %s", name, a)
			}
		}
		return protocol.Allow, ""
	}
}
