package gate

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"shinken.dev/go/escouade/protocol"
)

// What runs, shown to the guards (protocol.CommandInput's Program,
// Commands and Dynamic): a guard that matches the start of input.command
// is fooled by "bash -c 'rm …'", "\rm" or "env rm", and one that reads
// argv[0] by a PATH the agent set to a folder it wrote. The gate reads a
// shell line with a real shell parser (mvdan.cc/sh) in the variant of the
// shell that runs it, looks into the wrappers that run another command,
// and finds each program's real file on the PATH it will be found on.
// Whatever it cannot know before the line runs makes the request dynamic:
// when in doubt, dynamic.

// defaultPath is searched when the environment has no PATH, as the
// runtime's executor and a POSIX shell do.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// execvpPath is what the C library's execvp searches when the
// environment has no PATH (env -i prog).
const execvpPath = "/bin:/usr/bin"

// maxNesting bounds how deeply sh -c lines and wrappers are looked into.
const maxNesting = 8

// reader gathers the commands of one request.
type reader struct {
	path     string            // the PATH programs are found on
	cwd      string            // the folder the request runs in; "" for the runtime's
	inherit  map[string]string // set over the runtime's environment for every command (an exec's env)
	lang     syntax.LangVariant
	inLine   bool // reading a shell line: its builtins are the shell's
	moved    bool // the line changes folder: a relative name is unknown
	commands []protocol.SimpleCommand
	dynamic  bool
	found    map[string]prog // what find found, by name and PATH
	pathMemo                 // the PATH's folders, read once
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

// program returns the real file name runs on path, "" when none is found.
func (r *reader) program(name, path string) string {
	p, _ := r.find(name, path)
	return p.path
}

// A call is one simple command about to be read.
type call struct {
	argv   []string
	own    map[string]string // variables set for it alone
	redirs []protocol.Redirect
	path   string // the PATH it is found on
	inLine bool   // run by the shell reading the line: its builtins count
	depth  int
}

// argv adds the command argv, run with the variables own set for it
// alone (an exec's env), and what it runs in turn.
func (r *reader) argv(argv []string, own map[string]string, depth int) {
	path := r.path
	if p, ok := own["PATH"]; ok {
		path = p
	}
	r.command(call{argv: argv, own: own, path: path, depth: depth})
}

// command adds c and what it runs.
func (r *reader) command(c call) {
	if len(c.argv) == 0 {
		return
	}
	if c.depth > maxNesting {
		r.dynamic = true
		return
	}
	for k, v := range c.own {
		if runsCode(k) || (k == "PATH" && strings.Contains(v, "~")) {
			r.dynamic = true
		}
	}
	sc := protocol.SimpleCommand{Argv: c.argv, Env: merged(r.inherit, c.own), Redirects: c.redirs}
	name := c.argv[0]
	builtin := c.inLine && !strings.Contains(name, "/") && builtins(r.lang)[name]
	var p prog
	if !builtin {
		var ok bool
		if p, ok = r.find(name, c.path); ok {
			sc.Program, sc.ProgramID = p.path, p.id
		} else {
			r.dynamic = true // the line may make it, or the shell find another
		}
	}
	r.commands = append(r.commands, sc)
	if builtin {
		r.builtin(c)
		return
	}
	r.follow(c, p)
}

// merged returns over set over base; nil when both are empty.
func merged(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	m := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// line adds the commands of a line run by /bin/sh.
func (r *reader) line(src string, depth int) {
	p, ok := r.find("/bin/sh", r.path)
	lang, known := shellLang("sh", p)
	if !ok || !known {
		r.dynamic = true // no parser reads it as that shell does
		return
	}
	r.lineIn(src, lang, depth)
}

// lineIn adds the commands of a line read as lang reads it.
func (r *reader) lineIn(src string, lang syntax.LangVariant, depth int) {
	f, err := parse(src, lang)
	if err != nil {
		r.dynamic = true // the shell may read it otherwise, or refuse it
		return
	}
	saved := *r
	r.lang, r.inLine = lang, true
	for n := range syntax.Preorder(f) {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			switch ce.Args[0].Lit() {
			case "cd", "chdir", "pushd", "popd":
				r.moved = true // from the start: a loop runs it before what follows
			}
		}
	}
	first := len(r.commands)
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			r.stmt(n, depth)
		case *syntax.FuncDecl:
			r.dynamic = true // a function runs by the name of a program
		case *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause, *syntax.CStyleLoop:
			r.dynamic = true // arithmetic runs what a variable's value holds (a[$(…)])
		case *syntax.ForClause:
			if wi, ok := n.Loop.(*syntax.WordIter); ok && setsPath(wi.Name.Value) {
				r.dynamic = true
			}
		}
		return true
	})
	r.path, r.lang, r.inLine, r.moved = saved.path, saved.lang, saved.inLine, saved.moved
	if r.makesProgram(r.commands[first:]) {
		r.dynamic = true
	}
}

// makers are the programs that can make a file executable, or put one
// where a name finds it: after them, a name may run another file than the
// one the gate found.
var makers = set("ln link cp mv install rsync tar bsdtar cpio unzip 7z chmod gcc cc clang go ld patch dd " +
	"curl wget mkfifo")

// gitMakers are git's commands that write files of the work tree, with
// their modes.
var gitMakers = set("checkout switch restore reset merge pull stash apply am cherry-pick rebase clone " +
	"worktree read-tree checkout-index")

// makesProgram reports whether a line, whose commands are cmds, may
// make or change a program that it runs: a command that makes files
// executable beside another that runs a program (a pipeline runs them at
// once, a loop again), or a redirection that writes a program the line
// runs or into a folder of its PATH.
func (r *reader) makesProgram(cmds []protocol.SimpleCommand) bool {
	programs, making := 0, false
	for _, c := range cmds {
		if c.Program == "" {
			continue
		}
		programs++
		name := filepath.Base(c.Program)
		if makers[name] || makers[filepath.Base(c.Argv[0])] {
			making = true
		}
		if name == "git" && len(c.Argv) > 1 {
			for _, a := range c.Argv[1:] {
				if gitMakers[a] {
					making = true
				}
			}
		}
	}
	if making && programs > 1 {
		return true
	}
	// A line that names a .git folder beside git may write there (tee,
	// sort -o, cp…) what its git then runs.
	gits, gitArgs := 0, false
	for _, c := range cmds {
		if filepath.Base(c.Program) == "git" {
			gits++
		}
		if len(c.Argv) > 1 && slices.ContainsFunc(c.Argv[1:], inGitDir) {
			gitArgs = true
		}
	}
	if gits > 0 && gitArgs && len(cmds) > 1 {
		return true
	}
	dirs := map[string]bool{}
	for _, d := range filepath.SplitList(r.path) {
		dirs[filepath.Clean(d)] = true
	}
	for _, c := range cmds {
		for _, rd := range c.Redirects {
			switch rd.Op {
			case "<", "<<", "<<-", "<<<", "<&", ">&":
				continue
			}
			t := rd.Target
			if !filepath.IsAbs(t) {
				t = filepath.Join(r.dir(), t)
			}
			t = filepath.Clean(t)
			if dirs[filepath.Dir(t)] || inGitDir(t) {
				return true
			}
			for _, o := range cmds {
				if o.Program != "" && (o.Program == t || filepath.Base(o.Program) == filepath.Base(t)) {
					return true
				}
			}
		}
	}
	return false
}

// setsPath reports whether giving the variable name a value the gate
// does not follow changes what runs.
func setsPath(name string) bool {
	return name == "PATH" || runsCode(name)
}

// stmt adds the command of one statement.
func (r *reader) stmt(st *syntax.Stmt, depth int) {
	switch cmd := st.Cmd.(type) {
	case nil:
		if len(st.Redirs) > 0 { // > file alone
			r.commands = append(r.commands, protocol.SimpleCommand{Argv: []string{}, Env: merged(r.inherit, nil), Redirects: r.redirects(st.Redirs)})
		}
	case *syntax.CallExpr:
		r.callExpr(cmd.Assigns, r.words(cmd.Args), st.Redirs, depth)
	case *syntax.DeclClause:
		argv := []string{cmd.Variant.Value}
		for _, as := range cmd.Args {
			switch {
			case as.Array != nil || as.Index != nil || as.Append:
				r.dynamic = true
				if as.Name != nil {
					argv = append(argv, as.Name.Value)
				}
			case as.Naked && as.Name != nil:
				argv = append(argv, as.Name.Value)
			case as.Naked:
				argv = append(argv, r.words([]*syntax.Word{as.Value})...)
			default:
				v, known := r.word(as.Value)
				if !known {
					r.dynamic = true
				}
				argv = append(argv, as.Name.Value+"="+v)
			}
		}
		r.callExpr(nil, argv, st.Redirs, depth)
	default:
		// A compound command's redirections are not a simple command's:
		// reading is shown by what reads, writing cannot be.
		for _, rd := range st.Redirs {
			if writes(rd) {
				r.dynamic = true
			}
		}
	}
}

// writes reports whether a redirection may write a file.
func writes(rd *syntax.Redirect) bool {
	switch rd.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
		return false
	case syntax.DplOut:
		w := rd.Word.Lit()
		return strings.Trim(w, "0123456789-") != "" || w == ""
	}
	return true
}

// words returns the words as the shell reads them, marking the request
// dynamic when one is known only when it runs.
func (r *reader) words(ws []*syntax.Word) []string {
	argv := make([]string, 0, len(ws))
	for _, w := range ws {
		v, known := r.word(w)
		if !known {
			r.dynamic = true
		}
		argv = append(argv, v)
	}
	return argv
}

// callExpr adds a simple command of the line: its assignments, its words
// and its redirections.
func (r *reader) callExpr(assigns []*syntax.Assign, argv []string, rds []*syntax.Redirect, depth int) {
	own := map[string]string{}
	for _, as := range assigns {
		if as.Name == nil || as.Index != nil || as.Array != nil || as.Append {
			r.dynamic = true
			continue
		}
		v, known := r.word(as.Value)
		if !known {
			r.dynamic = true
		}
		own[as.Name.Value] = v
	}
	redirs := r.redirects(rds)
	if len(argv) == 0 {
		// Assignments alone set the shell's own variables, for the
		// commands after them.
		for k, v := range own {
			if runsCode(k) || (k == "PATH" && strings.Contains(v, "~")) {
				r.dynamic = true
			}
			if k == "PATH" {
				r.path = v
			}
		}
		if len(redirs) > 0 {
			r.commands = append(r.commands, protocol.SimpleCommand{Argv: []string{}, Env: merged(r.inherit, own), Redirects: redirs})
		}
		return
	}
	path := r.path
	if p, ok := own["PATH"]; ok {
		path = p
	}
	if len(own) == 0 {
		own = nil
	}
	r.command(call{argv: argv, own: own, redirs: redirs, path: path, inLine: true, depth: depth})
}

// redirects returns a statement's redirections as the shell reads them.
func (r *reader) redirects(rds []*syntax.Redirect) []protocol.Redirect {
	if len(rds) == 0 {
		return nil
	}
	out := make([]protocol.Redirect, 0, len(rds))
	for _, rd := range rds {
		x := protocol.Redirect{Op: rd.Op.String()}
		if rd.N != nil {
			x.FD = rd.N.Value
		}
		w := rd.Word
		if rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc {
			w = rd.Hdoc // the text the command reads
		}
		v, known := r.word(w)
		if !known {
			r.dynamic = true
		}
		if writes(rd) && !filepath.IsAbs(v) && r.moved {
			r.dynamic = true // relative to a folder the line changes
		}
		x.Target = v
		out = append(out, x)
	}
	return out
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
			if strings.ContainsAny(p.Value, "*?[") || (i == 0 && strings.HasPrefix(p.Value, "~")) ||
				strings.Contains(p.Value, "=~") || strings.Contains(p.Value, ":~") {
				known = false // a glob, a tilde: expanded when it runs
			}
			if r.lang != syntax.LangPOSIX && strings.Contains(p.Value, "{") && strings.Contains(p.Value, "}") {
				known = false // a brace expansion: {r,}m
			}
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				known = false // $'\x72m'
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				known = false // $"rm", translated when it runs
			}
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

// Parsers and printers are reused: making one costs a request more
// than it takes to parse its line (buffers of kilobytes).
var (
	parsers  sync.Map // a *sync.Pool of *syntax.Parser by syntax.LangVariant
	printers = sync.Pool{New: func() any { return syntax.NewPrinter() }}
)

// parse reads src as lang reads it.
func parse(src string, lang syntax.LangVariant) (*syntax.File, error) {
	pool, ok := parsers.Load(lang)
	if !ok {
		pool, _ = parsers.LoadOrStore(lang, &sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(lang)) }})
	}
	p := pool.(*sync.Pool).Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	pool.(*sync.Pool).Put(p)
	return f, err
}

// source prints a part of a word as written.
func source(n syntax.Node) string {
	var b strings.Builder
	p := printers.Get().(*syntax.Printer)
	p.Print(&b, n)
	printers.Put(p)
	return b.String()
}
