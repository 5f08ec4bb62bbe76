package hosttool

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// ToolCommands names the background commands' intents.
const ToolCommands = "commands"

// The background commands' plumbing. A command runs in a private folder
// made by mktemp (its handle), below a holder script that lives as long
// as it does: the holder is the exec that started it, so the command is
// contained like every exec and ends with the ACI session that holds that
// exec. The folder holds:
//
//   - in: a fifo, the command's standard input;
//   - ctl: a fifo read by a helper in the command's own pid namespace
//     (where it can signal): the words kill and eof;
//   - o.<n>: its output (stdout and stderr together) in chunks of a fixed
//     size, of which the newest three are kept, so that the output on
//     disk is bounded;
//   - hpid: the holder's pid and start time as the runtime's machine
//     numbers them (to tell a live holder from a dead one);
//   - pid: the command's pid, numbered the same way;
//   - mode and cmd: what runs, for a listing;
//   - exit: written once the command ended and its output is whole: its
//     exit status, or "killed".
//
// A folder whose holder died without writing exit (its session ended) is
// "lost": a listing removes it. An ended command's folder stays until it
// is removed, or for an hour.
var (
	// CommandStart starts a command in the background: $1 the output's
	// chunk size in bytes, $2 "line" (then $3 is a line run by /bin/sh -c)
	// or "argv" (then $3… are the program and its arguments). Its first
	// line of output is the command's folder; it then prints nothing
	// more, and ends when the command and its output have ended. Its
	// intent is the command it runs: a Line or an Argv.
	CommandStart = &Script{Tool: ToolCommands, Text: commandStartText, Intent: commandStartIntent}
	// CommandInput writes $2 to the standard input of the command of
	// folder $1. Its intent is the text, as a command line, as text typed
	// at the shell is.
	CommandInput = &Script{Tool: ToolCommands, Text: commandInputText, Intent: commandInputIntent}
	// The scripts that act on a command's folder unjudged (read, control) or
	// judged as typed input check first that the folder is no link, is the
	// user's own, and holds only files and pipes (no link an agent placed to
	// be read or written through).

	// CommandRead prints, for the command of folder $1, a header line
	// "<state> <from> <end> <total>" and then its output from byte $2,
	// at most $3 bytes (the header's from is later than $2 when older
	// output is no longer kept; end is where the next read starts). The
	// state is running, exit:<status>, killed or lost. Its intent is
	// KindControl.
	CommandRead = &Script{Tool: ToolCommands, Text: commandReadText, Intent: commandReadIntent}
	// CommandList prints one record per command folder: a line
	// "<folder> <pid> <state> <mode> <length>" followed by length bytes of
	// what runs (a line, or argv words each ended by NUL). It removes lost
	// folders, and ended ones an hour old. Its intent is KindControl.
	CommandList = &Script{Tool: ToolCommands, Text: commandListText, Intent: commandListIntent}
	// CommandControl sends the command of folder $1 a control word: kill
	// (SIGKILL to it and everything it started), eof (end its standard
	// input), or remove (kill it if it runs, and remove its folder). Its
	// intent is KindControl.
	CommandControl = &Script{Tool: ToolCommands, Text: commandControlText, Intent: commandControlIntent}
)

// Bounds of a background command.
const (
	// MinChunk and MaxChunk bound CommandStart's chunk size.
	MinChunk = 4 << 10
	MaxChunk = 64 << 20
	// MaxRead bounds what one CommandRead prints.
	MaxRead = 4 << 20
)

// commandState is the shell function every command script that reads a
// state shares: it sets s to running, exit:<status>, killed or lost for
// the folder $d.
// The exit file is looked for again once the holder is found gone: a
// holder writes it before it ends, and may have ended between the first
// look and the second (which read "lost" for a command that exited).
const commandState = `ended() {
  [ -f "$d/exit" ] || return 1
  s=$(cat "$d/exit"); case $s in killed) ;; *) s=exit:$s ;; esac
}
state() {
  ended && return
  s=lost
  if read -r h t <"$d/hpid" 2>/dev/null && [ -r "/proc/$h/stat" ] &&
    [ "$(cut -d')' -f2- "/proc/$h/stat" 2>/dev/null | awk '{ print $20 }')" = "$t" ]; then
    s=running
    return
  fi
  ended || s=lost
}
`

// commandStartText opens both fifos before it gives the handle: input
// sent at once waits in the pipe (a fifo no one holds open drops what is
// written to it), a control word never waits for the helper, and the
// command's read end is open before an eof can close the last writer (an
// eof that came first left the command waiting for a writer for ever).
// The helper ends with the command: the holder kills it last.
const commandStartText = `c=$1 m=$2
shift 2
d=$(mktemp -d "${TMPDIR:-/tmp}/shinken-cmd.XXXXXXXX") || exit 125
mkfifo -m 600 "$d/in" "$d/ctl" || exit 125
read -r h _ </proc/self/stat
echo "$h $(cut -d')' -f2- "/proc/$h/stat" | awk '{ print $20 }')" >"$d/hpid"
echo "$m" >"$d/mode"
echo "$c" >"$d/chunk"
case $m in line) printf '%s' "$1" ;; *) printf '%s\0' "$@" ;; esac >"$d/cmd"
[ "$m" = line ] && set -- /bin/sh -c "$1"
exec 0</dev/null 4<>"$d/in" 3<"$d/in" 5<>"$d/ctl"
printf '%s\n' "$d"
(
  exec 3<&- >/dev/null 2>&1
  while read -r w <&5; do
    case $w in
    kill)
      echo killed >"$d/exit"
      if [ "$$" != "$h" ]; then kill -9 -1; else kill -9 0; fi ;;
    eof) exec 4<&-; : >"$d/eof" ;;
    esac
  done
) &
k=$!
exec 4<&- 5<&-
{
  /bin/sh -c 'read -r p _ </proc/self/stat; echo "$p" >"$0/pid"; exec "$@"' "$d" "$@" <&3 3<&- 2>&1
  echo $? >"$d/status"
} | SHELL=/bin/sh split -a 12 -d -b "$c" --filter='cat >"$FILE"; ls -d "${FILE%.*}".* | head -n -3 | xargs -r rm -f --' - "$d/o." 3<&-
[ -f "$d/status" ] && [ ! -f "$d/exit" ] && mv "$d/status" "$d/exit"
kill "$k" 2>/dev/null
exit 0`

const commandInputText = `[ ! -L "$1" ] && [ -O "$1" ] && [ -z "$(find "$1" -mindepth 1 -maxdepth 1 ! -type f ! -type p -print -quit 2>/dev/null)" ] || { echo "no such command" >&2; exit 3; }
[ -p "$1/in" ] || { echo "no such command" >&2; exit 3; }
[ -e "$1/exit" ] && { echo "the command has ended" >&2; exit 4; }
[ -e "$1/eof" ] && { echo "the command's input was ended" >&2; exit 4; }
printf '%s' "$2" 1<>"$1/in"`

const commandReadText = `[ ! -L "$1" ] && [ -O "$1" ] && [ -z "$(find "$1" -mindepth 1 -maxdepth 1 ! -type f ! -type p -print -quit 2>/dev/null)" ] || { echo "no such command" >&2; exit 3; }
d=$1 off=$2 max=$3
[ -f "$d/hpid" ] || { echo "no such command" >&2; exit 3; }
` + commandState + `state
read -r c <"$d/chunk"
num() { n=${1##*.}; n=${n#"${n%%[!0]*}"}; echo "${n:-0}"; }
set -- "$d"/o.*
[ -e "$1" ] || set --
while [ $# -gt 2 ]; do shift; done
from=0 total=0
if [ $# -gt 0 ]; then
  from=$(($(num "$1") * c))
  eval "last=\${$#}"
  total=$(($(num "$last") * c + $(wc -c <"$last")))
fi
[ "$off" -gt "$from" ] && from=$off
[ "$from" -gt "$total" ] && from=$total
end=$((from + max))
[ "$end" -gt "$total" ] && end=$total
printf '%s %s %s %s\n' "$s" "$from" "$end" "$total"
[ "$end" -gt "$from" ] || exit 0
k=$((from / c))
for f in "$@"; do [ "$(num "$f")" -ge "$k" ] && cat -- "$f"; done | tail -c +$((from - k * c + 1)) | head -c $((end - from))`

const commandListText = commandState + `for d in "${TMPDIR:-/tmp}"/shinken-cmd.*; do
  [ -f "$d/hpid" ] && [ -O "$d" ] || continue
  state
  case $s in
  lost) rm -rf -- "$d"; continue ;;
  running) ;;
  *) [ -n "$(find "$d/exit" -mmin +60 2>/dev/null)" ] && { rm -rf -- "$d"; continue; } ;;
  esac
  read -r p <"$d/pid" 2>/dev/null || p=0
  read -r m <"$d/mode"
  printf '%s %s %s %s %s\n' "$d" "$p" "$s" "$m" "$(wc -c <"$d/cmd")"
  cat "$d/cmd"
done`

const commandControlText = `[ ! -L "$1" ] && [ -O "$1" ] && [ -z "$(find "$1" -mindepth 1 -maxdepth 1 ! -type f ! -type p -print -quit 2>/dev/null)" ] || { echo "no such command" >&2; exit 3; }
d=$1
[ -f "$d/hpid" ] || { echo "no such command" >&2; exit 3; }
` + commandState + `state
case $2 in
kill) [ "$s" = running ] && printf 'kill\n' 1<>"$d/ctl" ;;
eof) [ "$s" = running ] || { echo "the command has ended" >&2; exit 4; }; [ -e "$d/eof" ] || printf 'eof\n' 1<>"$d/ctl" ;;
remove)
  [ "$s" = running ] && printf 'kill\n' 1<>"$d/ctl"
  rm -rf -- "$d" 2>/dev/null || rm -rf -- "$d" ;;
esac
exit 0`

var cmdDirRE = regexp.MustCompile(`^shinken-cmd\.[A-Za-z0-9]{8}$`)

// CommandDir checks that dir is a background command's folder, as mktemp
// named it.
func CommandDir(dir string) error {
	if !path.IsAbs(dir) || path.Clean(dir) != dir || !cmdDirRE.MatchString(path.Base(dir)) || strings.ContainsAny(dir, "\n ") {
		return fmt.Errorf("%q is not a background command's folder", dir)
	}
	return nil
}

// errCommandArgs is the error of a command script given arguments it does
// not take.
var errCommandArgs = errors.New("arguments that do not fit the script")

func commandStartIntent(args []string, stdin *string) (Intent, error) {
	if len(args) < 3 || stdin != nil {
		return Intent{}, errCommandArgs
	}
	if n, err := strconv.Atoi(args[0]); err != nil || n < MinChunk || n > MaxChunk || strconv.Itoa(n) != args[0] {
		return Intent{}, fmt.Errorf("a chunk of %q bytes: want %d to %d", args[0], MinChunk, MaxChunk)
	}
	switch args[1] {
	case "line":
		if len(args) != 3 || strings.TrimSpace(args[2]) == "" || len(args[2]) > MaxTyped {
			return Intent{}, fmt.Errorf("a background line must be one argument of 1 to %d bytes, not blank", MaxTyped)
		}
		return Intent{Kind: KindCommand, Line: args[2]}, nil
	case "argv":
		if args[2] == "" {
			return Intent{}, errors.New("a background command's program is empty")
		}
		return Intent{Kind: KindCommand, Argv: args[2:]}, nil
	}
	return Intent{}, fmt.Errorf("no background mode %q (line or argv)", args[1])
}

func commandInputIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 2 || stdin != nil {
		return Intent{}, errCommandArgs
	}
	if err := CommandDir(args[0]); err != nil {
		return Intent{}, err
	}
	if args[1] == "" || len(args[1]) > MaxTyped {
		return Intent{}, fmt.Errorf("input must be 1 to %d bytes", MaxTyped)
	}
	return Intent{Kind: KindCommand, Line: args[1]}, nil
}

func commandReadIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 3 || stdin != nil {
		return Intent{}, errCommandArgs
	}
	if err := CommandDir(args[0]); err != nil {
		return Intent{}, err
	}
	if n, err := strconv.ParseInt(args[1], 10, 64); err != nil || n < 0 || strconv.FormatInt(n, 10) != args[1] {
		return Intent{}, fmt.Errorf("an offset of %q", args[1])
	}
	if n, err := strconv.Atoi(args[2]); err != nil || n < 1 || n > MaxRead || strconv.Itoa(n) != args[2] {
		return Intent{}, fmt.Errorf("a read of %q bytes: want 1 to %d", args[2], MaxRead)
	}
	return Intent{Kind: KindControl}, nil
}

func commandListIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 0 || stdin != nil {
		return Intent{}, errCommandArgs
	}
	return Intent{Kind: KindControl}, nil
}

func commandControlIntent(args []string, stdin *string) (Intent, error) {
	if len(args) != 2 || stdin != nil {
		return Intent{}, errCommandArgs
	}
	if err := CommandDir(args[0]); err != nil {
		return Intent{}, err
	}
	switch args[1] {
	case "kill", "eof", "remove":
		return Intent{Kind: KindControl}, nil
	}
	return Intent{}, fmt.Errorf("no control word %q", args[1])
}

// Held says argv starts a process the session holds for as long as it
// runs (the shell, a background command): the exec limit does not apply
// to it.
func Held(argv []string, env map[string]string, stdin *string) bool {
	in, ok, err := Recognize(argv, env, stdin)
	return ok && err == nil && (in.Tool == ToolShell && in.Interactive || len(argv) > 2 && argv[2] == commandStartText)
}
