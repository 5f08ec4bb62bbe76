package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A rule reads what a program runs from its arguments: it adds the
// commands it runs (a wrapper's), or marks the request dynamic when what
// runs is in an argument, a file or standard input (a shell's line, an
// interpreter's script, find's -exec).
type rule func(r *reader, c call, p prog)

// rules are the programs the gate knows to run something else, by name.
// A program is also known by its contents: a copy of env under another
// name is read as env (knownAs).
var rules = map[string]rule{}

// dynamicPrograms run what they are given, from their arguments, a file
// the agent may write, standard input or the user's settings: the gate
// shows them, and cannot show what they run.
const dynamicPrograms = `
	xargs parallel sem watch entr gdb lldb strace ltrace valgrind ionice chroot flock unshare taskset chrt
	prlimit setpriv runuser su sg newgrp pkexec script nsenter systemd-run systemd-nspawn firejail bwrap
	fakeroot fakechroot proot schroot dbus-run-session dbus-launch xvfb-run busybox toybox ssh scp sftp rsync
	xdg-open gio see run-mailcap edit compose print
	sensible-browser sensible-editor sensible-pager x-www-browser www-browser gnome-open kde-open exo-open
	mimeopen open vi vim vim.basic vim.tiny nvim view ex rvim rview gvim emacs emacsclient nano pico joe jed
	mcedit ed red less more most pg man pager m4 dc sqlite3 psql mysql mariadb crontab at batch tmux screen
	nc ncat netcat socat docker podman kubectl lxc-attach npm npx yarn pnpm pip pip3 gem bundle rake cargo go
	mvn gradle ant tox nox pytest patch dpkg apt apt-get mail mailx s-nail rlwrap unbuffer torsocks torify
	proxychains proxychains4 catchsegv eatmydata faketime numactl cpulimit cgexec setarch linux32 linux64
	chpst softlimit envdir setuidgid setlock tsp start-stop-daemon daemonize ssh-agent vglrun optirun
	primusrun xterm x-terminal-emulator gnome-terminal konsole alacritty kitty urxvt st sbcl pkexec
	zsh ksh ksh93 rksh pdksh oksh loksh fish csh tcsh rbash rzsh yash posh ash rc es elvish nu xonsh pwsh`

// interpreters run a program from an argument, a file or standard input
// (builders run the recipes of a file); only asking for their version or
// help runs none.
const interpreters = `
	make gmake bmake cmake ninja meson just
	python python2 python3 pypy pypy3 perl ruby node nodejs php lua luajit tclsh wish expect Rscript R julia
	guile racket ocaml java jshell deno bun irb gjs osascript swipl gst clisp scheme csi`

func init() {
	for _, n := range strings.Fields(dynamicPrograms) {
		rules[n] = ruleDynamic
	}
	for _, n := range strings.Fields(interpreters) {
		rules[n] = ruleInterpreter
	}
	for _, n := range []string{"sh", "dash", "bash", "mksh", "lksh"} {
		rules[n] = ruleShell
	}
	for n, f := range map[string]rule{
		"env": ruleEnv, "nohup": ruleNohup, "setsid": ruleSetsid, "nice": ruleNice, "stdbuf": ruleStdbuf,
		"timeout": ruleTimeout, "time": ruleTime, "sudo": ruleSudo, "doas": ruleDoas, "command": ruleCommand,
		"find": ruleFind, "awk": ruleAwk, "gawk": ruleAwk, "mawk": ruleAwk, "nawk": ruleAwk,
		"original-awk": ruleAwk, "sed": ruleSed, "git": ruleGit, "tar": ruleTar, "bsdtar": ruleTar,
		"sort": ruleOption("compress-program"), "split": ruleOption("filter"),
		"sdiff": ruleOption("diff-program"), "diff3": ruleOption("diff-program"),
		"wget": ruleOption("use-askpass", "execute", "-e"), "zip": ruleOption("unzip-command", "-TT"),
		"ip": ruleWord("exec"), "xdotool": ruleXdotool,
	} {
		rules[n] = f
	}
}

// multiCall are the programs that run the tool their argv[0] names: their
// identity says nothing of what runs.
var multiCall = set("busybox toybox coreutils")

// follow reads what the program p runs, by what it is (its contents),
// by the name it was run under, and by its real file's name.
func (r *reader) follow(c call, p prog) {
	real := filepath.Base(p.path)
	if multiCall[real] {
		r.dynamic = true
		return
	}
	for _, n := range []string{knownAs(p), filepath.Base(c.argv[0]), real, versionless(real)} {
		if f, ok := rules[n]; ok && n != "" {
			f(r, c, p)
			return
		}
	}
}

// versionless is a program's name without its version: python3.11 is
// python, perl5.36 perl.
func versionless(name string) string {
	return strings.TrimRight(name, "0123456789.")
}

// known indexes, by size, the files that the names of rules find on the
// default PATH, so that a copy of one under another name is read as it.
var known struct {
	once   sync.Once
	bySize map[int64][]knownFile
}

type knownFile struct{ name, path, real string }

// knownAs returns the name of rules whose program has p's contents, ""
// when none has.
func knownAs(p prog) string {
	if p.id == nil {
		return ""
	}
	known.once.Do(func() {
		known.bySize = map[int64][]knownFile{}
		names := make([]string, 0, len(rules))
		for n := range rules {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			for _, dir := range filepath.SplitList(defaultPath) {
				path := filepath.Join(dir, n)
				real, err := filepath.EvalSymlinks(path)
				if fi, serr := os.Stat(real); err == nil && serr == nil && fi.Mode().IsRegular() {
					known.bySize[fi.Size()] = append(known.bySize[fi.Size()], knownFile{n, path, real})
				}
			}
		}
	})
	candidates := known.bySize[p.size]
	for _, k := range candidates {
		if k.real == p.path {
			return k.name // the file itself, not a copy
		}
	}
	for _, k := range candidates {
		if q, ok := programAt(k.path); ok && q.id != nil && q.id.SHA256 == p.id.SHA256 {
			return k.name
		}
	}
	return ""
}

func ruleDynamic(r *reader, _ call, _ prog) { r.dynamic = true }

// versionArgs ask an interpreter for its version or its help.
var versionArgs = set("--version -V -VV --help -h")

func ruleInterpreter(r *reader, c call, _ prog) {
	if len(c.argv) == 1 {
		r.dynamic = true // its program on standard input
	}
	for _, a := range c.argv[1:] {
		if !versionArgs[a] {
			r.dynamic = true
		}
	}
}

// wrap adds the command a wrapper runs, with the variables it sets.
func (r *reader) wrap(c call, inner []string, env map[string]string, path string) {
	if len(inner) == 0 {
		return
	}
	r.command(call{argv: inner, own: merged(c.own, env), path: path, depth: c.depth + 1})
}

// ruleShell reads a shell's options, and the line of its -c, in the
// variant of the shell that runs it. A script, standard input, a login
// or interactive shell (its files), an option it does not know: dynamic.
func ruleShell(r *reader, c call, p prog) {
	lang, ok := shellLang(c.argv[0], p)
	if !ok {
		r.dynamic = true
		return
	}
	args := c.argv[1:]
	withLine, quiet := false, false
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			i++
			break options
		case a == "--version" || a == "--help":
			quiet = true
		case a == "--norc" || a == "--noprofile" || a == "--posix" || a == "--noediting" || a == "--verbose":
		case strings.HasPrefix(a, "--"):
			r.dynamic = true // --login, --rcfile, --init-file, one it does not know
			return
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for _, ch := range a[1:] {
				switch ch {
				case 'c':
					withLine = true
				case 'o':
					i++
					if i >= len(args) || !safeShellOptions[args[i]] {
						r.dynamic = true
						return
					}
				case 'e', 'u', 'v', 'x', 'n', 'a', 'f', 'h', 'm', 'b', 'C', 'B', 'E', 'H', 'P', 'T', 'p', 'r':
				default:
					r.dynamic = true // -i, -l, -s, -O, -k, one it does not know
					return
				}
			}
		default:
			break options
		}
	}
	operands := args[i:]
	switch {
	case quiet:
	case !withLine || len(operands) == 0:
		r.dynamic = true // a script, or standard input
	default:
		saved, savedPath := r.inherit, r.path
		r.inherit, r.path = merged(r.inherit, c.own), c.path
		r.lineIn(operands[0], lang, c.depth+1)
		r.inherit, r.path = saved, savedPath
	}
}

func ruleEnv(r *reader, c call, _ prog) {
	args := c.argv[1:]
	clear := false
	if len(args) > 0 && args[0] == "-" {
		clear, args = true, args[1:]
	}
	quiet := false
	rest, ok := getopt(args, "i0u:vC:S:", longs("ignore-environment null unset= chdir= split-string= debug "+
		"default-signal=? ignore-signal=? block-signal=? list-signal-handling help version"),
		func(o, v string) bool {
			switch o {
			case "i", "ignore-environment":
				clear = true
			case "u", "unset":
				return v != "PATH" && !runsCode(v)
			case "C", "chdir", "S", "split-string":
				return false // a line of its own; another folder
			case "help", "version":
				quiet = true
			}
			return true
		})
	if !ok {
		r.dynamic = true
		return
	}
	if quiet {
		return
	}
	env := map[string]string{}
	for len(rest) > 0 {
		k, v, ok := strings.Cut(rest[0], "=")
		if !ok {
			break
		}
		env[k] = v
		rest = rest[1:]
	}
	path := c.path
	if clear {
		path = execvpPath
	}
	if p, ok := env["PATH"]; ok {
		path = p
	}
	r.wrap(c, rest, env, path)
}

func ruleNohup(r *reader, c call, _ prog) {
	r.wrapped(c, "", longs("help version"))
}

func ruleSetsid(r *reader, c call, _ prog) {
	r.wrapped(c, "cfw", longs("ctty fork wait help version"))
}

func ruleStdbuf(r *reader, c call, _ prog) {
	r.wrapped(c, "i:o:e:", longs("input= output= error= help version"))
}

func ruleNice(r *reader, c call, _ prog) {
	args := c.argv[1:]
	if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && isNumber(strings.TrimPrefix(args[0][1:], "-")) {
		args = args[1:] // nice -5 prog, the old form
	}
	r.wrappedArgs(c, args, "n:", longs("adjustment= help version"))
}

// ruleTime reads GNU time: its -o writes a file, its -f a format; the gate
// knows neither.
func ruleTime(r *reader, c call, _ prog) {
	r.wrapped(c, "apqv", longs("append portability quiet verbose help version"))
}

func ruleTimeout(r *reader, c call, _ prog) {
	rest, ok := getopt(c.argv[1:], "s:k:v", longs("signal= kill-after= preserve-status foreground verbose help version"), nil)
	if !ok {
		r.dynamic = true
		return
	}
	if len(rest) > 1 {
		r.wrap(c, rest[1:], nil, c.path) // past the duration
	}
}

// wrapped adds the command a wrapper with these options runs.
func (r *reader) wrapped(c call, short string, long longOpts) {
	r.wrappedArgs(c, c.argv[1:], short, long)
}

func (r *reader) wrappedArgs(c call, args []string, short string, long longOpts) {
	quiet := false
	rest, ok := getopt(args, short, long, func(o, _ string) bool {
		quiet = quiet || o == "help" || o == "version"
		return true
	})
	switch {
	case !ok:
		r.dynamic = true
	case !quiet:
		r.wrap(c, rest, nil, c.path)
	}
}

// ruleSudo reads sudo: a shell (-s, -i), an edit (-e), a chroot (-R) or a
// folder (-D) it does not follow; its command is found on its secure path,
// which the gate reads as the default PATH, and dynamic when the two
// PATHs find different files.
func ruleSudo(r *reader, c call, _ prog) {
	quiet := false
	rest, ok := getopt(c.argv[1:], "AbEHKknPSVvBNg:h:p:r:t:T:u:U:C:", longs("askpass background bell close-from= "+
		"group= host= prompt= role= type= command-timeout= user= other-user= non-interactive preserve-groups "+
		"reset-timestamp remove-timestamp stdin preserve-env=? set-home help version validate"),
		func(o, _ string) bool {
			switch o {
			case "V", "v", "k", "K", "help", "version", "validate", "reset-timestamp", "remove-timestamp":
				quiet = true
			}
			return true
		})
	if !ok {
		r.dynamic = true
		return
	}
	env := map[string]string{}
	for len(rest) > 0 {
		k, v, ok := strings.Cut(rest[0], "=")
		if !ok {
			break
		}
		env[k] = v
		rest = rest[1:]
	}
	if quiet && len(rest) == 0 {
		return
	}
	if len(rest) > 0 && r.program(rest[0], c.path) != r.program(rest[0], defaultPath) {
		r.dynamic = true
	}
	r.wrap(c, rest, env, c.path)
}

func ruleDoas(r *reader, c call, _ prog) {
	rest, ok := getopt(c.argv[1:], "nu:a:", nil, nil)
	if !ok {
		r.dynamic = true // -s a shell, -C a configuration
		return
	}
	if len(rest) > 0 && r.program(rest[0], c.path) != r.program(rest[0], defaultPath) {
		r.dynamic = true
	}
	r.wrap(c, rest, nil, c.path)
}

// ruleCommand reads command run as a program (the shell's own is a
// builtin): -v and -V run nothing.
func ruleCommand(r *reader, c call, _ prog) {
	look := false
	rest, ok := getopt(c.argv[1:], "pvV", nil, func(o, _ string) bool {
		look = look || o != "p"
		return o != "p"
	})
	switch {
	case !ok:
		r.dynamic = true
	case !look:
		r.wrap(c, rest, nil, c.path)
	}
}

// ruleFind shows what find's -exec, -execdir, -ok and -okdir run, as
// commands of their own; their {} is known only when find runs.
func ruleFind(r *reader, c call, _ prog) {
	args := c.argv[1:]
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			r.wrap(c, args[i+1:j], nil, c.path)
			r.dynamic = true
			i = j
		}
	}
}

// ruleAwk reads awk's program: one that can run a command or write a file
// (system, a pipe, getline, print > file), from a file, or with an option
// the gate does not know, is dynamic.
func ruleAwk(r *reader, c call, _ prog) {
	args := c.argv[1:]
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if a == "-F" || a == "-v" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-F") || strings.HasPrefix(a, "-v") {
			continue
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			break
		}
		r.dynamic = true // -f, -W, -e, gawk's long options
		return
	}
	if i >= len(args) {
		r.dynamic = true
		return
	}
	if strings.ContainsAny(args[i], "|>@") || strings.Contains(args[i], "system") || strings.Contains(args[i], "getline") {
		r.dynamic = true
	}
}

var sedLongs = longs("quiet silent debug expression= file= follow-symlinks in-place=? line-length= null-data " +
	"zero-terminated posix regexp-extended separate sandbox unbuffered help version")

// ruleSed reads sed's scripts (GNU sed takes options anywhere): -i
// (writes its files), -f (a script in a file), and the commands that run
// or write (e, w, W, r, R, s///e, s///w) are dynamic.
func ruleSed(r *reader, c call, _ prog) {
	args := c.argv[1:]
	var scripts, operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			operands = append(operands, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, v, has := strings.Cut(a[2:], "=")
			full, ok := sedLongs.match(name)
			switch {
			case !ok || full == "file" || full == "in-place":
				r.dynamic = true
				return
			case full == "expression" || full == "line-length":
				if !has {
					if i++; i >= len(args) {
						return
					}
					v = args[i]
				}
				if full == "expression" {
					scripts = append(scripts, v)
				}
			}
			continue
		}
	cluster:
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'n', 'E', 'r', 's', 'u', 'z':
			case 'e', 'l':
				v := a[j+1:]
				if v == "" {
					if i++; i >= len(args) {
						return
					}
					v = args[i]
				}
				if a[j] == 'e' {
					scripts = append(scripts, v)
				}
				break cluster
			default:
				r.dynamic = true // -i, -f, one it does not know
				return
			}
		}
	}
	if len(scripts) == 0 && len(operands) > 0 {
		scripts = operands[:1]
	}
	for _, s := range scripts {
		if !sedSafe(s) {
			r.dynamic = true
		}
	}
}

// sedSafe reports whether a sed script only reads its input and writes
// its output: no command or flag that runs, reads or writes a file. A
// script the reader does not follow is not safe.
func sedSafe(s string) bool {
	i := 0
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', ';', '}':
			i++
			continue
		}
		var ok bool
		if i, ok = sedAddress(s, i); !ok {
			return false
		}
		if i < len(s) && s[i] == ',' {
			if i, ok = sedAddress(s, i+1); !ok {
				return false
			}
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '!') {
			i++
		}
		if i >= len(s) {
			return false
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l':
			for i < len(s) && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case '#', ':', 'b', 't', 'T':
			for i < len(s) && s[i] != '\n' && (cmd == '#' || cmd == ':' || s[i] != ';') {
				i++
			}
		case 'a', 'i', 'c':
			for i < len(s) && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 's', 'y':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return false
			}
			delim := s[i]
			for part := 0; part < 2; part++ {
				if i, ok = sedDelimited(s, i+1, delim); !ok {
					return false
				}
			}
			i++
			for i < len(s) && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
				if cmd == 'y' {
					return false
				}
				i++
			}
			if i < len(s) && strings.IndexByte(" \t\n;}", s[i]) < 0 {
				return false // e, w, or one it does not know
			}
		default:
			return false // e, r, R, w, W, v, one it does not know
		}
	}
	return true
}

// sedAddress skips an address at i: a line, $, /regex/ or \cregexc,
// with GNU's first~step, +N and ~N, and the regex's I and M flags.
func sedAddress(s string, i int) (int, bool) {
	switch {
	case i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '+' || s[i] == '~'):
		i++
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
			i++
		}
	case i < len(s) && s[i] == '$':
		i++
	case i < len(s) && (s[i] == '/' || s[i] == '\\'):
		delim := byte('/')
		if s[i] == '\\' {
			if i+1 >= len(s) {
				return 0, false
			}
			i++
			delim = s[i]
		}
		var ok bool
		if i, ok = sedDelimited(s, i+1, delim); !ok {
			return 0, false
		}
		i++
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
	}
	return i, true
}

// sedDelimited returns the index of the delimiter that ends the part
// starting at i, escapes skipped.
func sedDelimited(s string, i int, delim byte) (int, bool) {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\n':
			return 0, false
		case delim:
			return i, true
		}
	}
	return 0, false
}

// gitGlobalLongs are git's options before its command that change
// nothing of what it runs; any other (-c, -C, --exec-path, --git-dir,
// --work-tree, --config-env, -p for a pager) makes the request dynamic.
var gitGlobalLongs = set("--no-pager --no-replace-objects --literal-pathspecs --glob-pathspecs " +
	"--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --bare --version --help -P -v -h")

// gitCommands are git's own commands; any other is an alias or a
// git-<name> program, known only when git runs.
var gitCommands = set("add am annotate apply archive blame branch bundle cat-file check-attr check-ignore " +
	"checkout cherry cherry-pick clean clone commit count-objects describe diff diff-files diff-index " +
	"diff-tree fetch for-each-ref format-patch fsck gc grep hash-object init log ls-files ls-remote ls-tree " +
	"merge merge-base mv name-rev notes pull push range-diff rebase reflog remote reset restore rev-list " +
	"rev-parse revert rm shortlog show show-ref sparse-checkout stash status switch symbolic-ref tag " +
	"update-index update-ref var verify-commit version whatchanged worktree write-tree")

// gitRunning are the arguments with which a git command runs a program
// it is given: a config set, a command, an upload or receive pack, a
// pager for grep's matches, a template (hooks).
var gitRunning = []string{"-c", "--config", "--upload-pack", "--receive-pack", "--exec", "-x", "--template",
	"-O", "--open-files-in-pager", "-u", "--interactive", "-i", "--extcmd", "--tool"}

// ruleGit reads git's options and command, and its repository's hooks
// and config (gitRepoInert). git also runs what the user's and the
// system's config files name: a guard that allows git trusts those
// files, and their writers.
func ruleGit(r *reader, c call, _ prog) {
	if filepath.Base(c.argv[0]) != "git" {
		r.dynamic = true // git-clean is git clean: its command is in its name
		return
	}
	args := c.argv[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if !gitGlobalLongs[args[0]] {
			r.dynamic = true
			return
		}
		if args[0] == "--version" || args[0] == "--help" || args[0] == "-v" || args[0] == "-h" {
			return
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	cmd, args := args[0], args[1:]
	if !gitCommands[cmd] {
		r.dynamic = true
		return
	}
	// Its repository's hooks and config run code too (gitrepo.go).
	if r.moved || !gitRepoInert(r.dir()) {
		r.dynamic = true
		return
	}
	switch cmd {
	case "bisect", "submodule", "config", "difftool", "mergetool", "filter-branch":
		r.dynamic = true
		return
	case "clone", "fetch", "pull", "push", "ls-remote", "archive", "rebase", "grep", "init", "commit":
		for _, a := range args {
			name, _, _ := strings.Cut(a, "=")
			if slices.Contains(gitRunning, name) || strings.HasPrefix(a, "ext::") {
				r.dynamic = true
				return
			}
		}
	}
}

// ruleTar reads tar's options: one that runs a program (a compressor
// of the agent's, a checkpoint action, a command for each file, a
// volume script, a remote archive's shell) is dynamic.
func ruleTar(r *reader, c call, _ prog) {
	danger := []string{"checkpoint-action", "to-command", "use-compress-program", "info-script",
		"new-volume-script", "rsh-command", "rmt-command"}
	for i, a := range c.argv[1:] {
		switch {
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a[2:], "=")
			for _, d := range danger {
				if len(name) >= 3 && strings.HasPrefix(d, name) {
					r.dynamic = true
				}
			}
		case strings.HasPrefix(a, "-") || i == 0:
			if strings.ContainsAny(a, "IF") {
				r.dynamic = true
			}
		}
		if i := strings.IndexByte(a, ':'); i >= 0 && !strings.Contains(a[:i], "/") {
			r.dynamic = true // host:archive, through a remote shell
		}
	}
}

// ruleOption makes the program dynamic when one of its arguments is one
// of these options (long ones by any prefix GNU getopt takes, with or
// without =value).
func ruleOption(opts ...string) rule {
	return func(r *reader, c call, _ prog) {
		for _, a := range c.argv[1:] {
			name, _, _ := strings.Cut(a, "=")
			for _, o := range opts {
				if name == o || (strings.HasPrefix(name, "--") && len(name) > 3 && strings.HasPrefix(o, name[2:])) {
					r.dynamic = true
				}
			}
		}
	}
}

// ruleWord makes the program dynamic when one of its arguments is word.
// xdotoolCommands are xdotool's commands: a first argument that names
// none is a script it runs (a file, or - for standard input).
var xdotoolCommands = set(`behave behave_screen_edge click exec get_desktop get_desktop_for_window
	get_desktop_viewport get_num_desktops getactivewindow getdisplaygeometry getmouselocation
	getwindowfocus getwindowgeometry getwindowname getwindowpid help key keydown keyup mousedown
	mousemove mousemove_relative mouseup search selectwindow set_desktop set_desktop_for_window
	set_desktop_viewport set_num_desktops set_window sleep type version windowactivate windowclose
	windowfocus windowkill windowmap windowminimize windowmove windowquit windowraise windowreparent
	windowsize windowstate windowunmap`)

// ruleXdotool: xdotool runs a program with its exec command, anywhere in
// a chain of commands (a word "exec" typed by its type command reads so
// too), and runs a script when its first argument is no command of its.
func ruleXdotool(r *reader, c call, _ prog) {
	if len(c.argv) > 1 && !xdotoolCommands[c.argv[1]] && c.argv[1] != "--help" && c.argv[1] != "--version" ||
		slices.Contains(c.argv[1:], "exec") {
		r.dynamic = true
	}
}

func ruleWord(word string) rule {
	return func(r *reader, c call, _ prog) {
		if slices.Contains(c.argv[1:], word) {
			r.dynamic = true
		}
	}
}
