package guard

import (
	"fmt"
	"strings"

	"shinken.dev/go/escouade/protocol"
)

// sedRule allows sed with scripts the Guard reads whole and finds no
// command in that runs a program or touches a file other than its input
// and output: e, w, W, r, R, and the s command's e and w flags. An
// option it does not know, -i (the input edited in place) and -f (a
// script from a file) are refused.
func sedRule(argv []string) (protocol.Verdict, string) {
	var scripts []string
	haveScript := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			i = len(argv)
		case a == "-e" || a == "--expression":
			if i+1 >= len(argv) {
				return protocol.Deny, a + " with no script"
			}
			scripts, haveScript = append(scripts, argv[i+1]), true
			i++
		case strings.HasPrefix(a, "--expression="):
			scripts, haveScript = append(scripts, strings.TrimPrefix(a, "--expression=")), true
		case a == "-l" || a == "--line-length":
			i++
		case a == "-n" || a == "-E" || a == "-r" || a == "-s" || a == "-u" || a == "-z" || a == "--quiet" || a == "--silent" ||
			a == "--regexp-extended" || a == "--separate" || a == "--unbuffered" || a == "--null-data" || a == "--posix" ||
			a == "--debug" || a == "--sandbox" || strings.HasPrefix(a, "--line-length="):
		case strings.HasPrefix(a, "-") && a != "-" && !strings.HasPrefix(a, "--"):
			// Short options run together (-nE); -e's script may follow it.
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'n', 'E', 'r', 's', 'u', 'z':
				case 'e':
					rest := a[j+1:]
					if rest == "" {
						if i+1 >= len(argv) {
							return protocol.Deny, "-e with no script"
						}
						i++
						rest = argv[i]
					}
					scripts, haveScript = append(scripts, rest), true
					j = len(a)
				default:
					return protocol.Deny, fmt.Sprintf("-%c is not an option the guard allows (-i edits files, -f reads a script it cannot see)", a[j])
				}
			}
		case strings.HasPrefix(a, "--"):
			return protocol.Deny, a + " is not an option the guard allows"
		default:
			if !haveScript {
				scripts, haveScript = append(scripts, a), true
			}
		}
	}
	if !haveScript {
		return protocol.Deny, "no script"
	}
	if err := checkSed(strings.Join(scripts, "\n")); err != nil {
		return protocol.Deny, err.Error()
	}
	return protocol.Allow, ""
}

// checkSed reads a sed script (GNU sed's grammar) and returns an error
// for a command that runs a program or reads or writes a file, and for
// anything it cannot read.
func checkSed(s string) error {
	p := &sedParser{s: s}
	for {
		p.skip(" \t\n;")
		if p.eof() {
			return nil
		}
		if p.peek() == '#' {
			p.line()
			continue
		}
		if err := p.address(); err != nil {
			return err
		}
		p.skip(" \t")
		if p.peek() == ',' {
			p.i++
			p.skip(" \t")
			if err := p.address(); err != nil {
				return err
			}
			p.skip(" \t")
		}
		for p.peek() == '!' {
			p.i++
			p.skip(" \t")
		}
		if p.eof() {
			return fmt.Errorf("sed: an address with no command")
		}
		c := p.s[p.i]
		p.i++
		switch c {
		case '{':
			continue // a command may follow at once
		case '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'L':
			p.skip(" \t")
			p.digits()
		case 'b', 't', 'T', ':':
			p.label()
		case 'a', 'i', 'c':
			p.text()
		case 's':
			if err := p.substitute(); err != nil {
				return err
			}
		case 'y':
			if err := p.transliterate(); err != nil {
				return err
			}
		case 'e', 'w', 'W', 'r', 'R', 'v':
			return fmt.Errorf("sed: the %c command runs a program, or reads or writes a file", c)
		default:
			return fmt.Errorf("sed: %q is not a command the guard knows", c)
		}
		p.skip(" \t")
		if !p.eof() && !strings.ContainsRune(";\n}#", rune(p.peek())) {
			return fmt.Errorf("sed: unexpected %q after a command", p.peek())
		}
	}
}

type sedParser struct {
	s string
	i int
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }
func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.peek()) >= 0 {
		p.i++
	}
}

func (p *sedParser) digits() {
	for !p.eof() && p.peek() >= '0' && p.peek() <= '9' {
		p.i++
	}
}

func (p *sedParser) line() {
	for !p.eof() && p.peek() != '\n' {
		p.i++
	}
}

// label reads a label, to a ; or the end of the line.
func (p *sedParser) label() {
	for !p.eof() && p.peek() != '\n' && p.peek() != ';' {
		p.i++
	}
}

// text reads a, i and c's text: the rest of the line, and the lines
// after it while each ends in a backslash.
func (p *sedParser) text() {
	for !p.eof() {
		c := p.peek()
		p.i++
		if c == '\\' && !p.eof() {
			p.i++
			continue
		}
		if c == '\n' {
			return
		}
	}
}

// address reads one address, if any: a number, first~step, $, /re/,
// \cREc (each with its I and M flags), +N or ~N.
func (p *sedParser) address() error {
	if p.eof() {
		return nil
	}
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.digits()
		if !p.eof() && p.peek() == '~' {
			p.i++
			p.digits()
		}
	case c == '$':
		p.i++
	case c == '+' || c == '~':
		p.i++
		p.digits()
	case c == '/' || c == '\\':
		if c == '\\' {
			p.i++
			if p.eof() {
				return fmt.Errorf("sed: an address that does not end")
			}
		}
		delim := p.peek()
		p.i++
		if _, err := p.until(delim); err != nil {
			return err
		}
		for !p.eof() && (p.peek() == 'I' || p.peek() == 'M') {
			p.i++
		}
	}
	return nil
}

// until reads to an unescaped delim, past it.
func (p *sedParser) until(delim byte) (string, error) {
	start := p.i
	for !p.eof() {
		c := p.peek()
		p.i++
		switch {
		case c == '\\':
			p.i++
		case c == delim:
			return p.s[start : p.i-1], nil
		case c == '\n' && delim != '\n':
			return "", fmt.Errorf("sed: a newline inside a regular expression")
		}
	}
	return "", fmt.Errorf("sed: a regular expression or replacement that does not end")
}

// substitute reads s's regex, replacement and flags.
func (p *sedParser) substitute() error {
	if p.eof() || p.peek() == '\\' || p.peek() == '\n' {
		return fmt.Errorf("sed: s with no delimiter")
	}
	delim := p.peek()
	p.i++
	if _, err := p.until(delim); err != nil {
		return err
	}
	if _, err := p.until(delim); err != nil {
		return err
	}
	for !p.eof() {
		switch c := p.peek(); {
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
			p.i++
		case c == 'e' || c == 'w':
			return fmt.Errorf("sed: the s command's %c flag runs a program or writes a file", c)
		default:
			return nil
		}
	}
	return nil
}

func (p *sedParser) transliterate() error {
	if p.eof() || p.peek() == '\\' || p.peek() == '\n' {
		return fmt.Errorf("sed: y with no delimiter")
	}
	delim := p.peek()
	p.i++
	if _, err := p.until(delim); err != nil {
		return err
	}
	_, err := p.until(delim)
	return err
}
