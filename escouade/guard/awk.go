package guard

import (
	"fmt"
	"strings"

	"shinken.dev/go/escouade/protocol"
)

// awkRule allows awk with a program given on its command line that
// holds no system(), no getline, no pipe (| and |&), no output
// redirection (print > file) and no @ directive; -f, -i, -l, -E and
// their long forms (a program or a library from a file) are refused.
func awkRule(argv []string) (protocol.Verdict, string) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			if i+1 < len(argv) {
				return awkProgram(argv[i+1])
			}
			return protocol.Deny, "no program"
		case a == "-F" || a == "-v":
			i++
		case strings.HasPrefix(a, "-F") || strings.HasPrefix(a, "-v"):
		case a == "--posix" || a == "--traditional" || a == "-P" || a == "--characters-as-bytes" || a == "-b" ||
			a == "--sandbox" || a == "-S" || a == "--re-interval" || a == "-r":
		case strings.HasPrefix(a, "-"):
			return protocol.Deny, a + " is not an option the guard allows (-f, -i, -l and -E read code from a file)"
		default:
			return awkProgram(a)
		}
	}
	return protocol.Deny, "no program"
}

// awkProgram judges an awk program's text.
func awkProgram(prog string) (protocol.Verdict, string) {
	if err := checkAwk(prog); err != nil {
		return protocol.Deny, err.Error()
	}
	return protocol.Allow, ""
}

// checkAwk reads an awk program's tokens (strings and regular
// expressions skipped whole) and refuses system, getline, @, a pipe, and
// a > or >> inside a print or printf statement outside parentheses. A /
// is read as division unless it cannot be (after an operator, a keyword
// or a brace), so that a regular expression is never taken for code the
// program does not hold, and a string that does not end is refused.
func checkAwk(p string) error {
	if strings.Contains(p, "system") || strings.Contains(p, "getline") || strings.Contains(p, "@") {
		return fmt.Errorf("awk: the program may run a program or read a file (system, getline or @)")
	}
	inPrint, depth := false, 0
	operand := false // the last token was an operand: a / after it divides
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '"':
			j, err := awkEnd(p, i, '"')
			if err != nil {
				return err
			}
			i, operand = j, true
		case c == '/' && !operand:
			j, err := awkEnd(p, i, '/')
			if err != nil {
				return err
			}
			i, operand = j, true
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			operand = false
		case c == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i++
				operand = false
				continue
			}
			return fmt.Errorf("awk: a pipe runs a program")
		case c == '>':
			if inPrint && depth == 0 {
				return fmt.Errorf("awk: print > writes a file")
			}
			operand = false
		case c == '(' || c == '[':
			depth++
			operand = false
		case c == ')' || c == ']':
			depth--
			operand = true
		case c == ';' || c == '{' || c == '}':
			// A newline does not end a print here: after a comma or a
			// backslash the statement goes on, and refusing more is safe.
			inPrint, depth, operand = false, 0, false
		case (c == '+' || c == '-') && i+1 < len(p) && p[i+1] == c:
			i++
			operand = true // x++ / 2 divides
		case isAwkWord(c):
			j := i
			for j < len(p) && (isAwkWord(p[j]) || p[j] >= '0' && p[j] <= '9') {
				j++
			}
			word := p[i:j]
			i = j - 1
			switch word {
			case "print", "printf":
				inPrint, operand = true, false
			case "return", "in", "case", "if", "while", "for", "do", "else":
				operand = false
			default:
				operand = true
			}
		case c >= '0' && c <= '9' || c == '$' || c == '.':
			operand = c != '$'
		case c == ' ' || c == '\t' || c == '\\' || c == '\n':
		default:
			operand = false
		}
	}
	return nil
}

func isAwkWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// awkEnd returns the index of the quote or slash that ends the string
// or regular expression starting at i.
func awkEnd(p string, i int, end byte) (int, error) {
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case end:
			return j, nil
		case '\n':
			return 0, fmt.Errorf("awk: a string or regular expression that does not end on its line")
		}
	}
	return 0, fmt.Errorf("awk: a string or regular expression that does not end")
}
