package hosttool

import (
	"errors"
	"fmt"
	"strings"
)

// Openers are the programs Open may name, each a platform's way to open a
// file or a URL with its default application.
var Openers = []string{"xdg-open", "open"}

// Open checks, before a file or a URL is opened with args opener and
// target, what the opener would fail on at once: the opener is missing
// (exit 96), or a target that is no URL does not exist (exit 90). Its
// Intent is the opener's command line, dynamic: what an opener runs is
// the user's file associations, which the agent may have written.
var Open = &Script{Tool: "open", Text: `o=$1 t=$2
command -v -- "$o" >/dev/null 2>&1 || { echo "$o is not installed" >&2; exit 96; }
case $t in
[a-zA-Z]*:*) case ${t%%:*} in *[!a-zA-Z0-9+.-]*) ;; *) exit 0 ;; esac ;;
esac
[ -e "$t" ] || { echo "$t does not exist" >&2; exit 90; }`,
	Intent: func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 2, stdin, false); err != nil {
			return Intent{}, err
		}
		if !isOpener(args[0]) {
			return Intent{}, fmt.Errorf("opener %q: one of %s", args[0], strings.Join(Openers, ", "))
		}
		t := args[1]
		switch {
		case t == "":
			return Intent{}, errors.New("nothing to open")
		case strings.IndexByte(t, 0) >= 0:
			return Intent{}, errors.New("a target holding a NUL byte")
		case !IsURL(t):
			if err := CheckPath(t); err != nil {
				return Intent{}, err
			}
		}
		return Intent{Kind: KindCommand, Argv: []string{args[0], t}, Dynamic: true}, nil
	}}

// ExitNoOpener is Open's exit status when the opener is not installed.
const ExitNoOpener = 96

func isOpener(s string) bool {
	for _, o := range Openers {
		if s == o {
			return true
		}
	}
	return false
}

// IsURL says whether t starts with a URL scheme ("https:", "mailto:"), as
// Open's script reads it: a letter, then letters, digits, "+", "." or
// "-", then ":".
func IsURL(t string) bool {
	scheme, _, ok := strings.Cut(t, ":")
	if !ok || scheme == "" || !isLetter(scheme[0]) {
		return false
	}
	for i := 1; i < len(scheme); i++ {
		c := scheme[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
