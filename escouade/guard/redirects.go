package guard

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"shinken.dev/go/escouade/protocol"
)

// A shell line's redirections are judged from the line itself too, not
// only from the redirects the gate shows: a redirection that writes is
// an edit, and a gate that shows none (an older one) must not make
// "echo > victim" pass. The line is read as bash reads it (a superset of
// what sh accepts: bash's &> is sh's & then >, which writes the same
// file); a line it cannot read is refused.

// lineRedirects returns the redirections of a shell line, each with its
// target as the shell reads it; an error for a line it cannot read or a
// target known only when it runs.
func lineRedirects(line string) ([]protocol.Redirect, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, fmt.Errorf("the guard cannot read the line: %v", err)
	}
	var out []protocol.Redirect
	var bad error
	syntax.Walk(f, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if !ok || bad != nil {
			return bad == nil
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
	return out, bad
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

// lineWrites judges the redirections of a shell line run in cwd.
func (g *Guard) lineWrites(line, cwd string) (protocol.Verdict, string) {
	rs, err := lineRedirects(line)
	if err != nil {
		return protocol.Deny, err.Error()
	}
	for _, r := range rs {
		if v, why := g.redirect(r, cwd); v != protocol.Allow {
			return v, why
		}
	}
	return protocol.Allow, ""
}
