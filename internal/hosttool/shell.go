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
// (--noediting) and history expansion, so that the terminal's own echo,
// turned off, is the only one, and a "!" reads as written; it expands
// braces, as its users expect.
//
// The shell's environment keeps the programs it starts from reading the
// terminal themselves: pagers are cat (PAGER, GIT_PAGER, MANPAGER,
// SYSTEMD_PAGER, and less in its secure mode), editors fail (EDITOR,
// VISUAL, GIT_EDITOR, GIT_SEQUENCE_EDITOR), and git, apt, pip and ssh do
// not prompt. That is defence in depth only: a program may still open
// /dev/tty, or read its standard input, which is the terminal.
//
// So a line typed with ShellLine reaches the terminal only when the shell
// itself will read it as a command line: the shell is /bin/sh (the
// shell the line is judged as, see Intent.Line), its process group is
// the terminal's foreground one (nothing it started runs in the
// foreground), it has printed its primary prompt since the last line was
// typed (sh's PS1 writes 1 to the file "ready" after its marker;
// ShellLine writes 0: one line per prompt, so no line typed before is
// unread, in the fifo or the terminal's queue; a script cannot ask the
// queue's length, FIONREAD, and the mark says more: that the shell itself
// read the line, and is reading again), and the terminal's settings are those it
// started with (no other character ends a line). The line is one line
// (a newline inside would reach whatever the first line starts) with no
// control character (an erase or a kill-line would make the shell read
// another line than the one judged), short enough for the terminal's
// line buffer. Typing and the interrupt and end-of-input keys take the
// folder's lock (flock), so that no key comes between ShellLine's checks
// and its line. Text typed with ShellType reaches whatever reads the
// terminal, which its intent says: it is dynamic.
var (
	// ShellStart starts a shell: $1 the shell's absolute path, $2 and $3
	// the terminal's columns and rows, $4 the prompt markers' nonce (hex).
	// Its first line of output is the folder the other scripts name; then
	// comes the terminal's output. Its intent is the shell, started
	// interactive.
	ShellStart = &Script{Tool: ToolShell, Text: shellStartText, Intent: shellStartIntent}
	// ShellType types $2 at the shell of folder $1, as is. Its intent is
	// the typed text, as a command line, dynamic: whatever reads the
	// terminal (the shell, or a program in the foreground) reads it.
	ShellType = &Script{Tool: ToolShell, Text: shellTypeText, Intent: shellTypeIntent}
	// ShellLine types the command line $2 (one line, ended by its
	// newline) at the shell of folder $1 when the shell itself will read
	// it (see above) in the working folder $3, or refuses: exit 5 when a
	// program runs in the foreground (its stderr names it), 6 when the
	// shell is not at its prompt (it runs the line typed before, or
	// waits for the rest of a line), 7 when the shell is not /bin/sh or
	// its terminal's settings changed, 8 when the shell's working folder
	// is not $3 (its stdout is the shell's folder: judge the line again
	// there). Its intent is the line, as /bin/sh reads it in $3: a line
	// runs in the folder the earlier lines moved the shell to, and what
	// its relative paths, ./programs and git name depends on it.
	ShellLine = &Script{Tool: ToolShell, Text: shellLineText, Intent: shellLineIntent}
	// ShellControl sends the shell of folder $1 a control word: int (the
	// terminal's interrupt, ctrl-c), eof (ctrl-d), kill (SIGKILL to the
	// terminal's foreground process group, unless the shell is in the
	// foreground), size <cols> <rows>, close (end the shell and its
	// jobs), or cwd (print the shell's working folder, for ShellLine's
	// $3). Its intent is KindControl.
	ShellControl = &Script{Tool: ToolShell, Text: shellControlText, Intent: shellControlIntent}
)

// shellStartText: the folder's name goes into PS1 as it is, so it may
// hold only characters no shell reads specially. The prompt's mark for
// ShellLine costs a fork of the shell per prompt, after the command's
// output and before its marker: bash, which ShellLine refuses, goes
// without.
const shellStartText = `sh=$1 cols=$2 rows=$3 m=$4
d=$(mktemp -d "${TMPDIR:-/tmp}/shinken-shell.XXXXXXXX") || exit 125
case $d in *[!A-Za-z0-9_./-]*) rm -rf -- "$d"; echo "the temporary folder's name $d holds characters a prompt would read" >&2; exit 125 ;; esac
mkfifo -m 600 "$d/in" "$d/ctl" || exit 125
e=$(printf '\033') b=$(printf '\007')
printf "PS1='%s]777;%s;\$?%s\$(echo 1 >|%s/ready)'\nPS2='%s]777;%s;more%s'\nunset ENV PROMPT_COMMAND\ncase \${BASH_VERSION-} in ?*) set +H; PS1='%s]777;%s;\$?%s' ;; esac\n" "$e" "$m" "$b" "$d" "$e" "$m" "$b" "$e" "$m" "$b" >"$d/rc"
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
export PAGER=cat GIT_PAGER=cat MANPAGER=cat SYSTEMD_PAGER= LESSSECURE=1 EDITOR=false VISUAL=false GIT_EDITOR=false GIT_SEQUENCE_EDITOR=false
export GIT_TERMINAL_PROMPT=0 GIT_SSH_COMMAND='ssh -o BatchMode=yes' SSH_ASKPASS_REQUIRE=never DEBIAN_FRONTEND=noninteractive PIP_NO_INPUT=1
SHELL=/bin/sh script -qfec 'd=$SHINKEN_D sh=$SHINKEN_SH s=$SHINKEN_SIZE
unset SHINKEN_D SHINKEN_SH SHINKEN_SIZE COLUMNS LINES
stty $s -echo; stty -g >"$d/termios"; tty >"$d/tty"; echo $$ >"$d/spid"
read -r h _ </proc/self/stat; echo "$h" >"$d/hpid"
case ${sh##*/} in bash) exec "$sh" --noediting --rcfile "$d/rc" -i ;; esac
export ENV="$d/rc"; exec "$sh" -i' /dev/null <&3 3<&-
s=$?
rm -rf -- "$d"
exit $s`

// shellDirCheck opens the shell's folder $1 as fd 9, after checking it
// holds the fifo "in", and takes its lock.
const shellDirCheck = `[ ! -L "$1" ] && [ -p "$1/in" ] && [ ! -L "$1/in" ] && exec 9<"$1" && flock 9 || { echo "no such shell" >&2; exit 3; }
`

const shellTypeText = shellDirCheck + `printf '%s' "$2" >"$1/in"`

// shellLineText: /proc/<shell>/stat's fields after the command's name
// (which ends at the last ") ") are state ppid pgrp session tty_nr tpgid:
// $5 and $8 once $1 and $2 are kept. A foreground process that is the
// shell's own program is a subshell, or a child not yet become the
// program it runs: it is named as such, not as the shell. It runs two
// programs (flock, stty): the rest is the shell's own.
const shellLineText = shellDirCheck + `c=$3
read -r h <"$1/hpid" && read -r st <"/proc/$h/stat" || { echo "no such shell" >&2; exit 3; }
[ "/proc/$h/exe" -ef /bin/sh ] || { echo "the shell is not /bin/sh, the shell its lines are judged as" >&2; exit 7; }
set -- "$1" "$2" ${st##*) }
if [ "$8" != "$5" ]; then
  w=
  [ "/proc/$8/exe" -ef "/proc/$h/exe" ] || w=$(tr '\0' ' ' <"/proc/$8/cmdline" 2>/dev/null | tr -d '\001-\037\177' | cut -c 1-200) w=${w%' '}
  echo "${w:-a program the shell started} runs in the foreground" >&2
  exit 5
fi
read -r t <"$1/tty" && read -r g <"$1/termios" && [ "$(stty -g -F "$t")" = "$g" ] || { echo "the terminal's settings are not those the shell started with (a program changed them): close the shell to start a new one" >&2; exit 7; }
{ read -r r <"$1/ready"; } 2>/dev/null && [ "$r" = 1 ] || { echo "the shell is not at its prompt: it runs the line typed before, or waits for the rest of a line" >&2; exit 6; }
[ "/proc/$h/cwd" -ef "$c" ] || { readlink "/proc/$h/cwd"; echo "the shell's working folder is not the one the line was judged in" >&2; exit 8; }
echo 0 >"$1/ready"
printf '%s' "$2" >"$1/in"`

const shellControlText = `[ ! -L "$1" ] && [ -p "$1/ctl" ] && [ ! -L "$1/ctl" ] && [ -p "$1/in" ] && [ ! -L "$1/in" ] || { echo "no such shell" >&2; exit 3; }
case $2 in
int) exec 9<"$1" && flock 9 && printf '\003' >"$1/in" ;;
eof) exec 9<"$1" && flock 9 && printf '\004' >"$1/in" ;;
size) stty -F "$(cat "$1/tty")" cols "$3" rows "$4" ;;
cwd) read -r h <"$1/hpid" && readlink "/proc/$h/cwd" ;;
*) printf '%s\n' "$2" >"$1/ctl" ;;
esac`

// MaxTyped bounds the text one ShellType carries (a single argument of
// execve may not pass 128 KiB).
const MaxTyped = 64 << 10

// ShellLine's refusals: its exit codes, and the end of its stderr when a
// program runs in the foreground (the program's command line comes first).
const (
	LineForeground   = 5
	LineNotAtPrompt  = 6
	LineMoved        = 8
	ForegroundSuffix = " runs in the foreground"
)

// MaxLine bounds the line one ShellLine carries, its newline included:
// the terminal's line buffer holds 4095 bytes, and cuts a longer line,
// so that the shell would read another line than the one judged.
const MaxLine = 4000

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
	return Intent{Kind: KindCommand, Line: args[1], Dynamic: true}, nil
}

func shellLineIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 3 || stdin != nil {
		return Intent{}, errShellArgs
	}
	if err := shellDir(args[0]); err != nil {
		return Intent{}, err
	}
	if err := CheckLine(args[1]); err != nil {
		return Intent{}, err
	}
	if !path.IsAbs(args[2]) || path.Clean(args[2]) != args[2] {
		return Intent{}, fmt.Errorf("the line's working folder %q is not a clean absolute path", args[2])
	}
	return Intent{Kind: KindCommand, Line: args[1], Dir: args[2]}, nil
}

// ErrNotALine is the error of a ShellLine's text that is not one command
// line.
var ErrNotALine = errors.New("not one command line")

// CheckLine checks that line is what ShellLine types: one command line,
// not blank, ended by its newline, of at most MaxLine bytes, with no
// control character but tabs.
func CheckLine(line string) error {
	body, ok := strings.CutSuffix(line, "\n")
	switch {
	case !ok:
		return fmt.Errorf("%w: it must end with a newline", ErrNotALine)
	case len(line) > MaxLine:
		return fmt.Errorf("%w: %d bytes, at most %d (the terminal's line buffer)", ErrNotALine, len(line), MaxLine)
	case strings.TrimSpace(body) == "":
		return fmt.Errorf("%w: it is blank", ErrNotALine)
	case strings.Contains(body, "\n"):
		return fmt.Errorf("%w: it holds a newline (type one line at a time: a second one would reach what the first starts)", ErrNotALine)
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return fmt.Errorf("%w: it holds the control character %#02x (the terminal acts on it: an erase or a kill-line makes another line than the one typed)", ErrNotALine, c)
		}
	}
	return nil
}

func shellControlIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 4 || stdin != nil {
		return Intent{}, errShellArgs
	}
	if err := shellDir(args[0]); err != nil {
		return Intent{}, err
	}
	switch args[1] {
	case "int", "eof", "kill", "close", "cwd":
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
