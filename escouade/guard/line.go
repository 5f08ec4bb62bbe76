package guard

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"shinken.dev/go/escouade/protocol"
)

// A shell line is read by the guard too, for what a gate may not show:
// its redirections (a redirection that writes is an edit, and a gate
// that shows none must not make "echo > victim" pass) and the variables
// it sets (PATH in a for loop or an assignment of its own, PS4, IFS…),
// which must be the line's own (shellVar). The line is read as bash
// reads it (a superset of what sh accepts: bash's &> is sh's & then >,
// which writes the same file); a line it cannot read is refused.

// lineRedirects returns the redirections of a shell line, each with its
// target as the shell reads it; an error for a line it cannot read or a
// target known only when it runs.
func lineRedirects(line string) ([]protocol.Redirect, error) {
	rs, _, err := readLine(line)
	return rs, err
}

// readLine returns a line's redirections and the names of the variables
// it sets.
func readLine(line string) ([]protocol.Redirect, []string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, nil, fmt.Errorf("the guard cannot read the line: %v", err)
	}
	var out []protocol.Redirect
	var names []string
	var bad error
	syntax.Walk(f, func(n syntax.Node) bool {
		if bad != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil {
				names = append(names, n.Name.Value)
			}
		case *syntax.WordIter:
			if n.Name != nil {
				names = append(names, n.Name.Value)
			}
		case *syntax.ParamExp:
			if n.Exp != nil && n.Param != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				names = append(names, n.Param.Value)
			}
		case *syntax.BinaryArithm:
			if n.Op == syntax.Assgn || n.Op >= syntax.AddAssgn && n.Op <= syntax.PowAssgn {
				names = append(names, arithmName(n.X))
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				names = append(names, arithmName(n.X))
			}
		}
		r, ok := n.(*syntax.Redirect)
		if !ok {
			return true
		}
		op := r.Op.String()
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			return true
		}
		target, known := literal(r.Word)
		if !known {
			bad = fmt.Errorf("%s %s: a redirection to a word known only when it runs", op, source(r.Word))
			return false
		}
		rd := protocol.Redirect{Op: op, Target: target}
		if r.N != nil {
			rd.FD = r.N.Value
		}
		out = append(out, rd)
		return true
	})
	return out, names, bad
}

// arithmName is the variable an arithmetic assignment sets, or "" when
// it is not a plain name (which no name is allowed to be).
func arithmName(x syntax.ArithmExpr) string {
	if w, ok := x.(*syntax.Word); ok {
		if l := w.Lit(); validName(l) {
			return l
		}
	}
	return ""
}

// literal returns a word's value when it holds no expansion.
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[~{\\") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				l, ok := dp.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "\\$`") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func source(w *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return b.String()
}

// lineWrites judges what a shell line run in cwd expands, sets and
// writes; interactive when it is typed into a shell.
func (g *Guard) lineWrites(line, cwd string, interactive bool) (protocol.Verdict, string) {
	if w := bashWords(line, interactive); w != "" {
		return g.dynamic, fmt.Sprintf("the line is dynamic: bash expands %q", w)
	}
	rs, names, err := readLine(line)
	if err != nil {
		return protocol.Deny, err.Error()
	}
	for _, name := range names {
		if !g.shellVar(name) {
			return protocol.Deny, fmt.Sprintf("the line sets %s, a variable the shell or a program may read (Policy.Env)", name)
		}
	}
	for _, r := range rs {
		if v, why := g.redirect(r, cwd); v != protocol.Allow {
			return v, why
		}
	}
	return protocol.Allow, ""
}

// bashWords returns the first piece of a line that bash expands where a
// POSIX reading (the gate's) sees a plain word, or "": a brace expansion
// ({r,}m, -{delete,print}) and a $'…' or $"…" string, which bash runs as
// the line's sh when /bin/sh is bash and always in the shell tool; and,
// when typed into an interactive shell, a history expansion (!$, !!:1),
// which brings back a word of an earlier line.
func bashWords(line string, interactive bool) string {
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			i++
		case c == '!' && interactive && i+1 < len(line) && !strings.ContainsRune(" \t\n=(\"", rune(line[i+1])):
			return line[i:min(len(line), i+3)]
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(line) && (line[i+1] == '\'' || line[i+1] == '"'):
			return line[i : i+2]
		case c == '{':
			end := strings.IndexAny(line[i:], "} \t\n;|&")
			if end > 0 && line[i+end] == '}' {
				if body := line[i+1 : i+end]; strings.Contains(body, ",") || strings.Contains(body, "..") {
					return line[i : i+end+1]
				}
			}
		}
	}
	return ""
}
