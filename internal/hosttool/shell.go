package hosttool

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// KindControl is the kind of a keystroke or a signal to the agent's own
// shell that runs nothing new (interrupt, end of input, kill its
// foreground program, resize its terminal, close it): the runtime lets it
// through without asking its Authorizer, since a plugin has nothing to
// judge in it. Everything typed at the shell is a command (ShellType).
const KindControl = "control"

// ToolShell names the shell's intents.
const ToolShell = "shell"

// The shell's plumbing. The shell runs on a pseudo-terminal (script(1))
// in a private folder made by mktemp: its terminal reads the fifo "in"
// (typed text, and the control characters of interrupt and end of
// input, in the order they were sent), and a helper in the shell's own
// process tree (its pid namespace, where it can signal) reads the words
// kill and close from the fifo "ctl". Its prompts are markers: PS1 prints ESC ] 777 ; <nonce> ;
// <$?> BEL and PS2 ESC ] 777 ; <nonce> ; more BEL, so that a reader of its
// output knows when a command ended and with what status, and when the
// shell waits for the rest of a line. bash runs without readline
// (--noediting), so that the terminal's own echo, turned off, is the only
// one.
var (
	// ShellStart starts a shell: $1 the shell's absolute path, $2 and $3
	// the terminal's columns and rows, $4 the prompt markers' nonce (hex).
	// Its first line of output is the folder the other scripts name; then
	// comes the terminal's output. Its intent is the shell, started
	// interactive.
	ShellStart = &Script{Tool: ToolShell, Text: shellStartText, Intent: shellStartIntent}
	// ShellType types $2 at the shell of folder $1. Its intent is the
	// typed text, as a command line.
	ShellType = &Script{Tool: ToolShell, Text: shellTypeText, Intent: shellTypeIntent}
	// ShellControl sends the shell of folder $1 a control word: int (the
	// terminal's interrupt, ctrl-c), eof (ctrl-d), kill (SIGKILL to the
	// terminal's foreground process group, unless the shell is in the
	// foreground), size <cols> <rows>, or close (end the shell and its
	// jobs). Its intent is KindControl.
	ShellControl = &Script{Tool: ToolShell, Text: shellControlText, Intent: shellControlIntent}
)

const shellStartText = `sh=$1 cols=$2 rows=$3 m=$4
d=$(mktemp -d "${TMPDIR:-/tmp}/shinken-shell.XXXXXXXX") || exit 125
mkfifo -m 600 "$d/in" "$d/ctl" || exit 125
e=$(printf '\033') b=$(printf '\007')
printf "PS1='%s]777;%s;\$?%s'\nPS2='%s]777;%s;more%s'\nunset ENV PROMPT_COMMAND\n" "$e" "$m" "$b" "$e" "$m" "$b" >"$d/rc"
printf '%s\n' "$d"
(
  exec 4<>"$d/ctl" 3<&- 0</dev/null >/dev/null 2>&1
  while read -r c x y <&4; do
    case $c in
    kill)
      read -r h <"$d/hpid"
      set -- $(cut -d')' -f2- "/proc/$h/stat")
      [ "$6" = "$h" ] || [ "$6" -le 0 ] && continue
      g=$(awk -v g="$6" '$1 == "NSpgid:" && $2 == g { print $NF; exit }' /proc/[0-9]*/status 2>/dev/null)
      [ -n "$g" ] && kill -9 "-$g" ;;
    close) kill -9 "-$(cat "$d/spid")" "$$"; rm -rf -- "$d"; exit ;;
    esac
  done
) &
exec 3<>"$d/in"
export SHINKEN_D="$d" SHINKEN_SH="$sh" SHINKEN_SIZE="cols $cols rows $rows" TERM=xterm-256color
SHELL=/bin/sh script -qfec 'd=$SHINKEN_D sh=$SHINKEN_SH s=$SHINKEN_SIZE
unset SHINKEN_D SHINKEN_SH SHINKEN_SIZE COLUMNS LINES
stty $s -echo; tty >"$d/tty"; echo $$ >"$d/spid"
read -r h _ </proc/self/stat; echo "$h" >"$d/hpid"
case ${sh##*/} in bash) exec "$sh" --noediting --rcfile "$d/rc" -i ;; esac
export ENV="$d/rc"; exec "$sh" -i' /dev/null <&3 3<&-
s=$?
rm -rf -- "$d"
exit $s`

const shellTypeText = `[ ! -L "$1" ] && [ -p "$1/in" ] && [ ! -L "$1/in" ] || { echo "no such shell" >&2; exit 3; }
printf '%s' "$2" >"$1/in"`

const shellControlText = `[ ! -L "$1" ] && [ -p "$1/ctl" ] && [ ! -L "$1/ctl" ] && [ -p "$1/in" ] && [ ! -L "$1/in" ] || { echo "no such shell" >&2; exit 3; }
case $2 in
int) printf '\003' >"$1/in" ;;
eof) printf '\004' >"$1/in" ;;
size) stty -F "$(cat "$1/tty")" cols "$3" rows "$4" ;;
*) printf '%s\n' "$2" >"$1/ctl" ;;
esac`

// MaxTyped bounds the text one ShellType carries (a single argument of
// execve may not pass 128 KiB).
const MaxTyped = 64 << 10

// Terminal sizes a shell may be given.
const (
	MinTerm = 2
	MaxTerm = 1000
)

var (
	nonceRE    = regexp.MustCompile(`^[0-9a-f]{16,64}$`)
	shellDirRE = regexp.MustCompile(`^shinken-shell\.[A-Za-z0-9]{8}$`)
)

// errShellArgs is the error of a shell script given arguments it does not
// take.
var errShellArgs = errors.New("arguments that do not fit the script")

func shellStartIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 4 || stdin != nil {
		return Intent{}, errShellArgs
	}
	if !path.IsAbs(args[0]) || path.Clean(args[0]) != args[0] {
		return Intent{}, fmt.Errorf("the shell %q is not a clean absolute path", args[0])
	}
	for _, n := range args[1:3] {
		if _, err := termSize(n); err != nil {
			return Intent{}, err
		}
	}
	if !nonceRE.MatchString(args[3]) {
		return Intent{}, errors.New("the marker's nonce is not 16 to 64 hex digits")
	}
	return Intent{Kind: KindCommand, Argv: []string{args[0]}, Interactive: true}, nil
}

func shellTypeIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 2 || stdin != nil {
		return Intent{}, errShellArgs
	}
	if err := shellDir(args[0]); err != nil {
		return Intent{}, err
	}
	if args[1] == "" || len(args[1]) > MaxTyped {
		return Intent{}, fmt.Errorf("typed text must be 1 to %d bytes", MaxTyped)
	}
	return Intent{Kind: KindCommand, Line: args[1]}, nil
}

func shellControlIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 4 || stdin != nil {
		return Intent{}, errShellArgs
	}
	if err := shellDir(args[0]); err != nil {
		return Intent{}, err
	}
	switch args[1] {
	case "int", "eof", "kill", "close":
		if args[2] != "" || args[3] != "" {
			return Intent{}, errShellArgs
		}
	case "size":
		for _, n := range args[2:] {
			if _, err := termSize(n); err != nil {
				return Intent{}, err
			}
		}
	default:
		return Intent{}, fmt.Errorf("no control word %q", args[1])
	}
	return Intent{Kind: KindControl}, nil
}

// shellDir checks that dir is a shell's folder, as mktemp named it.
func shellDir(dir string) error {
	if !path.IsAbs(dir) || path.Clean(dir) != dir || !shellDirRE.MatchString(path.Base(dir)) || strings.ContainsAny(dir, "\n") {
		return fmt.Errorf("%q is not a shell's folder", dir)
	}
	return nil
}

// termSize reads a terminal's rows or columns.
func termSize(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < MinTerm || n > MaxTerm || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("a terminal size of %q: want %d to %d", s, MinTerm, MaxTerm)
	}
	return n, nil
}
