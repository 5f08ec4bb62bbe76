package hosttool

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// The file tools' scripts. Every path they take is absolute and clean (no
// "." or ".." element, no repeated or trailing slash): the path a plugin
// is shown is the one the script opens, so a guard that judges by folder
// is not led elsewhere by "..". The caller resolves relative paths and ~
// before sending them (see machine's Home). Symlinks are followed as the
// shell follows them; the Intent names the path as given.

// Exit statuses of the file scripts, distinct from the commands' own.
const (
	ExitNotExist  = 90 // the path (or a move's source) does not exist
	ExitWrongKind = 91 // a folder where a file is needed, or the reverse
	ExitFailed    = 93 // the command failed; stderr says why
	ExitExists    = 94 // the destination exists (mkdir, move)
	ExitNotEmpty  = 95 // a folder with entries, delete without recursion
)

// Chunk and page bounds. MaxReadChunk is the most one read returns: its
// base64 (with line breaks) fits the runtime's default exec output budget,
// 1 MiB. MaxWriteChunk is the most one write carries: its base64 fits the
// runtime's default 16 MiB message limit with room to spare. MaxListPage
// is the most entries one listing page holds.
const (
	MaxReadChunk  = 512 << 10
	MaxWriteChunk = 8 << 20
	MaxListPage   = 10000
)

// The modes of write_file's first argument.
const (
	WriteReplace = "replace" // truncate, then write from the start
	WriteAppend  = "append"  // write at the end
	WriteAt      = "at"      // write at the offset, keeping the rest
)

// ReadFile reads args path, offset, length: the file's size on a line,
// then the base64 of at most length bytes from offset.
var ReadFile = &Script{Tool: "read_file", Text: `f=$1 o=$2 n=$3
[ -e "$f" ] || exit 90
[ -f "$f" ] || exit 91
[ -r "$f" ] || { echo "permission denied" >&2; exit 93; }
s=$(wc -c < "$f") || exit 93
echo $s
[ "$n" -gt 0 ] && [ "$o" -lt "$s" ] || exit 0
tail -c +$((o + 1)) -- "$f" | head -c "$n" | base64`,
	Intent: func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 3, stdin, false); err != nil {
			return Intent{}, err
		}
		if _, err := number("offset", args[1], 1<<62); err != nil {
			return Intent{}, err
		}
		if _, err := number("length", args[2], MaxReadChunk); err != nil {
			return Intent{}, err
		}
		return pathIntent(KindRead, args[0])
	}}

// WriteFile writes its standard input, base64, to args path in mode
// (WriteReplace, WriteAppend, or WriteAt at offset): in place, through a
// symlink as shell redirection writes, so an existing file keeps its mode,
// owner and hard links, and a new one is made with the umask.
var WriteFile = &Script{Tool: "write_file", Text: `m=$1 f=$2 o=$3
d=${f%/*}
[ -d "${d:-/}" ] || exit 90
[ ! -d "$f" ] || exit 91
case $m in
replace) base64 -d > "$f" || exit 93 ;;
append) base64 -d >> "$f" || exit 93 ;;
at)
  : >> "$f" || exit 93
  b=65536
  while [ $((o % b)) -ne 0 ]; do b=$((b / 2)); done
  base64 -d | dd of="$f" obs=$b seek=$((o / b)) conv=notrunc 2>/dev/null || { echo "writing at $o failed" >&2; exit 93; } ;;
esac`,
	Intent: func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 3, nil, false); err != nil {
			return Intent{}, err
		}
		switch args[0] {
		case WriteReplace, WriteAppend:
			if args[2] != "0" {
				return Intent{}, fmt.Errorf("an offset of %q with mode %s (0 only)", args[2], args[0])
			}
		case WriteAt:
			if _, err := number("offset", args[2], 1<<62); err != nil {
				return Intent{}, err
			}
		default:
			return Intent{}, fmt.Errorf("mode %q: replace, append or at", args[0])
		}
		if stdin == nil {
			return Intent{}, errors.New("no contents on standard input")
		}
		n := base64.StdEncoding.DecodedLen(len(*stdin))
		if n > MaxWriteChunk+2 {
			return Intent{}, fmt.Errorf("%d bytes of base64, over the %d-byte chunk bound", len(*stdin), MaxWriteChunk)
		}
		if _, err := base64.StdEncoding.Strict().DecodeString(*stdin); err != nil {
			return Intent{}, fmt.Errorf("the contents are not base64: %v", err)
		}
		return pathIntent(KindEdit, args[1])
	}}

// ListFiles lists args path by page: after the entry named cursor (""
// for the first page), at most limit+1 entries (the one past limit says
// that more follow), each "kind/size/name\0" with kind f, d, l or
// another letter. The order is the shell's glob order in the C locale,
// visible names first, then those starting with one dot, then with two;
// a cursor names the last entry of the page before.
var ListFiles = &Script{Tool: "list_files", Text: `cd -- "$1" 2>/dev/null || { [ -e "$1" ] || [ -L "$1" ] || exit 90; [ -d "$1" ] || exit 91; echo "permission denied" >&2; exit 93; }
LC_ALL=C
export LC_ALL
c=$2 n=$3 i=0
case $c in "") g=0 ;; ..*) g=3 ;; .*) g=2 ;; *) g=1 ;; esac
gnu=
find . -maxdepth 0 -printf '' 2>/dev/null && gnu=1
emit() {
  [ "$k" -ge "$g" ] || return 0
  for f; do
    [ "$k" -gt "$g" ] || [ "$f" \> "$c" ] || continue
    [ -e "$f" ] || [ -L "$f" ] || continue
    [ "$i" -le "$n" ] || exit 0
    i=$((i + 1))
    if [ -n "$gnu" ]; then printf './%s\0' "$f"; continue; fi
    if [ -L "$f" ]; then y=l s=0
    elif [ -d "$f" ]; then y=d s=0
    elif [ -f "$f" ]; then y=f s=$(wc -c < "$f" 2>/dev/null) || s=0
    else y=o s=0; fi
    printf '%s/%s/%s\0' "$y" $s "$f"
  done
}
{ k=1; emit *; k=2; emit .[!.]*; k=3; emit ..?*; } | if [ -n "$gnu" ]; then
  xargs -0 -r sh -c 'exec find "$@" -prune -printf "%y/%s/%f\0" 2>/dev/null' sh || :
else cat; fi`,
	Intent: func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 3, stdin, false); err != nil {
			return Intent{}, err
		}
		if c := args[1]; c != "" && (c == "." || c == ".." || strings.ContainsAny(c, "/\x00")) {
			return Intent{}, fmt.Errorf("cursor %q is no entry's name", c)
		}
		if n, err := number("limit", args[2], MaxListPage); err != nil {
			return Intent{}, err
		} else if n == 0 {
			return Intent{}, errors.New("a limit of 0")
		}
		return pathIntent(KindRead, args[0])
	}}

// Stat describes args path itself (a symlink is not followed): a line
// "kind size mode mtime" (kind l, d, f or o; mode octal; mtime in Unix
// seconds), then a symlink's target.
var Stat = &Script{Tool: "stat", Text: `f=$1
[ -e "$f" ] || [ -L "$f" ] || exit 90
if [ -L "$f" ]; then y=l; elif [ -d "$f" ]; then y=d; elif [ -f "$f" ]; then y=f; else y=o; fi
m=$(stat -c '%s %a %Y' -- "$f") || exit 93
echo "$y $m"
[ "$y" != l ] || readlink -- "$f"`,
	Intent: onePath(KindRead)}

// Exists prints "yes" when args path names anything (a dangling symlink
// included), "no" otherwise.
var Exists = &Script{Tool: "exists", Text: `if [ -e "$1" ] || [ -L "$1" ]; then echo yes; else echo no; fi`,
	Intent: onePath(KindRead)}

// Mkdir makes the folder args path; with parents "1", its missing parents
// too, and an existing folder is no error.
var Mkdir = &Script{Tool: "mkdir", Text: `f=$1
if [ "$2" = 1 ]; then
  [ ! -e "$f" ] || [ -d "$f" ] || exit 91
  mkdir -p -- "$f" || exit 93
else
  [ ! -e "$f" ] && [ ! -L "$f" ] || exit 94
  d=${f%/*}
  [ -d "${d:-/}" ] || exit 90
  mkdir -- "$f" || exit 93
fi`,
	Intent: func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 2, stdin, false); err != nil {
			return Intent{}, err
		}
		if err := flag("parents", args[1]); err != nil {
			return Intent{}, err
		}
		return pathIntent(KindEdit, args[0])
	}}

// Move renames args from to to (a folder with its contents). An existing
// to is refused unless overwrite is "1", and a folder is never replaced
// nor moved into: to names the result.
var Move = &Script{Tool: "move", Text: `f=$1 t=$2
[ -e "$f" ] || [ -L "$f" ] || exit 90
d=${t%/*}
[ -d "${d:-/}" ] || { echo "no folder $d" >&2; exit 90; }
if [ -e "$t" ] || [ -L "$t" ]; then
  [ "$3" = 1 ] || exit 94
  [ ! -d "$t" ] || [ -L "$t" ] || exit 91
fi
mv -f -T -- "$f" "$t" || exit 93`,
	Intent: func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 3, stdin, false); err != nil {
			return Intent{}, err
		}
		if err := flag("overwrite", args[2]); err != nil {
			return Intent{}, err
		}
		from, err := pathIntent(KindEdit, args[0])
		if err != nil {
			return Intent{}, err
		}
		to, err := pathIntent(KindEdit, args[1])
		if err != nil {
			return Intent{}, fmt.Errorf("destination: %w", err)
		}
		if from.Path == "/" || to.Path == "/" {
			return Intent{}, errors.New("the root folder cannot move")
		}
		from.To = to.Path
		return from, nil
	}}

// Delete removes args path: a file or a symlink (not its target), an
// empty folder, or with recursive "1" a folder and everything in it.
var Delete = &Script{Tool: "delete", Text: `f=$1
[ -e "$f" ] || [ -L "$f" ] || exit 90
if [ -d "$f" ] && [ ! -L "$f" ]; then
  if [ "$2" = 1 ]; then rm -rf -- "$f" || exit 93
  else rmdir -- "$f" 2>/dev/null || { [ -z "$(ls -A -- "$f")" ] || exit 95; exit 93; }; fi
else rm -f -- "$f" || exit 93; fi`,
	Intent: func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 2, stdin, false); err != nil {
			return Intent{}, err
		}
		if err := flag("recursive", args[1]); err != nil {
			return Intent{}, err
		}
		in, err := pathIntent(KindEdit, args[0])
		if err == nil && in.Path == "/" {
			err = errors.New("the root folder cannot be deleted")
		}
		return in, err
	}}

// onePath is the Intent of a script of one path and no input.
func onePath(kind string) func([]string, *string) (Intent, error) {
	return func(args []string, stdin *string) (Intent, error) {
		if err := nArgs(args, 1, stdin, false); err != nil {
			return Intent{}, err
		}
		return pathIntent(kind, args[0])
	}
}

// nArgs checks that there are n arguments and, unless withStdin, no
// standard input.
func nArgs(args []string, n int, stdin *string, withStdin bool) error {
	if len(args) != n {
		return fmt.Errorf("%d arguments, want %d", len(args), n)
	}
	if stdin != nil && !withStdin {
		return errors.New("standard input it does not read")
	}
	return nil
}

// pathIntent is a read or an edit of p, which must be absolute and clean.
func pathIntent(kind, p string) (Intent, error) {
	if err := CheckPath(p); err != nil {
		return Intent{}, err
	}
	return Intent{Kind: kind, Path: p}, nil
}

// CheckPath says whether p is a path a file script takes: absolute, clean
// (path.Clean leaves it as it is) and without NUL.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("an empty path")
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path %q holds a NUL byte", p)
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is not absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean (it reads %q)", p, path.Clean(p))
	}
	return nil
}

// number reads a decimal argument from 0 to max, written without sign or
// leading zero.
func number(name, s string, max int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > max || strconv.FormatInt(n, 10) != s {
		return 0, fmt.Errorf("%s %q: a decimal number from 0 to %d", name, s, max)
	}
	return n, nil
}

// flag reads a "0" or "1" argument.
func flag(name, s string) error {
	if s != "0" && s != "1" {
		return fmt.Errorf("%s %q: 0 or 1", name, s)
	}
	return nil
}
