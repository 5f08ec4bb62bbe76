package guard

import (
	"slices"
	"strings"
	"testing"

	"shinken.dev/go/escouade/protocol"
)

// TestRules: each default rule on the forms it allows, asks about and
// refuses.
func TestRules(t *testing.T) {
	tests := []struct {
		argv string // split at spaces; _ stands for a space inside a word
		want protocol.Verdict
	}{
		{"find . -name *.go -type f -print", protocol.Allow},
		{"find . -delete", protocol.Deny},
		{"find . -exec rm {} ;", protocol.Deny},
		{"find . -execdir rm {} +", protocol.Deny},
		{"find . -okdir rm {} ;", protocol.Deny},
		{"find . -fprintf out %p", protocol.Deny},
		{"find . -fls out", protocol.Deny},

		{"git status --short", protocol.Allow},
		{"git --no-pager log -p", protocol.Allow},
		{"git diff HEAD~1 -- a.go", protocol.Allow},
		{"git commit -m msg", protocol.Allow},
		{"git config --get user.name", protocol.Allow},
		{"git config --list", protocol.Allow},
		{"git --version", protocol.Allow},
		{"git push origin main", protocol.Ask},
		{"git checkout -b topic", protocol.Ask},
		{"git -c core.pager=rm log", protocol.Deny},
		{"git --config-env=core.pager=X log", protocol.Deny},
		{"git --exec-path=. status", protocol.Deny},
		{"git -C / status", protocol.Deny},
		{"git --git-dir=x status", protocol.Deny},
		{"git --work-tree=x status", protocol.Deny},
		{"git config alias.x !rm", protocol.Deny},
		{"git config core.fsmonitor rm", protocol.Deny},
		{"git config --unset core.x", protocol.Deny},
		{"git grep -Orm x", protocol.Deny},
		{"git grep --open-files-in-pager=rm x", protocol.Deny},
		{"git diff --output=victim", protocol.Deny},
		{"git difftool", protocol.Deny},
		{"git x", protocol.Deny},

		{"sed -n s/a/b/p f", protocol.Allow},
		{"sed -e 1d -e $d f", protocol.Allow},
		{"sed -nE /x/{p;q} f", protocol.Allow},
		{"sed y/abc/xyz/ f", protocol.Allow},
		{"sed s|a|b|g;3q f", protocol.Allow},
		{"sed 1i\\_header f", protocol.Allow},
		{"sed -i s/a/b/ f", protocol.Deny},
		{"sed -ni p f", protocol.Deny},
		{"sed --in-place s/a/b/ f", protocol.Deny},
		{"sed -f script f", protocol.Deny},
		{"sed 1e_rm_x f", protocol.Deny},
		{"sed e f", protocol.Deny},
		{"sed s/.*/rm/e f", protocol.Deny},
		{"sed s/a/b/gw_out f", protocol.Deny},
		{"sed 1w_out f", protocol.Deny},
		{"sed /x/W_out f", protocol.Deny},
		{"sed r_/etc/passwd f", protocol.Deny},
		{"sed 1R_x f", protocol.Deny},
		{"sed s/a f", protocol.Deny},
		{"sed", protocol.Deny},

		{"awk {print_$1} f", protocol.Allow},
		{"awk -F: $3_>_1000_{print_$1} f", protocol.Allow},
		{"awk BEGIN{x=4/2;print_x}", protocol.Allow},
		{"awk {print_($1_>_2)} f", protocol.Allow},
		{"awk BEGIN{system(\"rm\")}", protocol.Deny},
		{"awk {print_>_\"out\"}", protocol.Deny},
		{"awk {print_>>_\"out\"}", protocol.Deny},
		{"awk {printf(\"%s\",$1)_>_\"out\"}", protocol.Deny},
		{"awk BEGIN{\"date\"|getline}", protocol.Deny},
		{"awk {print_|_\"sh\"}", protocol.Deny},
		{"awk BEGIN{x++_/_1;print_\"\"_>_\"v\";y=1/1}", protocol.Deny},
		{"awk -f prog f", protocol.Deny},
		{"awk @load_\"x\"", protocol.Deny},
		{"awk BEGIN{print_\"a", protocol.Deny},

		{"python3 --version", protocol.Allow},
		{"python3 -c print(1)", protocol.Ask},
		{"python3", protocol.Ask},
		{"perl -e unlink", protocol.Ask},
		{"make all", protocol.Ask},
		{"make --version", protocol.Allow},
		{"xargs rm", protocol.Deny},
		{"env LANG=C ls", protocol.Allow},
		{"env -i ls", protocol.Allow},
		{"env -S rm_x", protocol.Deny},
		{"env -vS rm_x", protocol.Deny},
		{"env --split-string=rm_x", protocol.Deny},
		{"time -p ls", protocol.Allow},
		{"time -o ls rm x", protocol.Deny},
		{"nice -n 5 ls", protocol.Allow},
		{"nice --adjustment=5 ls", protocol.Deny},
		{"timeout 5 ls", protocol.Allow},
		{"timeout -s KILL 5 ls", protocol.Deny},
		{"bash -c ls", protocol.Deny},
		{"sort -n f", protocol.Allow},
		{"sort -o f g", protocol.Deny},
		{"sort -no f g", protocol.Deny},
		{"sort --out=f g", protocol.Deny},
		{"sort --compress-prog=rm g", protocol.Deny},
		{"uniq f", protocol.Allow},
		{"uniq f g", protocol.Deny},
		{"tee f", protocol.Deny},
	}
	for _, tt := range tests {
		argv := strings.Fields(tt.argv)
		for i := range argv {
			argv[i] = strings.ReplaceAll(argv[i], "_", " ")
		}
		rule := DefaultRules[argv[0]]
		if rule == nil {
			t.Fatalf("%s: no rule", argv[0])
		}
		v, why := rule(argv)
		if v != tt.want {
			t.Errorf("%q: %s (%s), want %s", argv, v, why, tt.want)
		}
		if v != protocol.Allow && why == "" {
			t.Errorf("%q: a %s with no reason", argv, v)
		}
	}
}

// TestBuiltins: the builtins a line may use, and the forms refused.
func TestBuiltins(t *testing.T) {
	g := &Guard{env: DefaultEnv}
	for line, want := range map[string]protocol.Verdict{
		"set -e": protocol.Allow, "set -euo pipefail": protocol.Allow, "set -eo xtrace": protocol.Deny, "set -eu -o pipefail": protocol.Allow,
		"set -x": protocol.Deny, "set -a": protocol.Deny, "set -o xtrace": protocol.Deny, "set -- a b": protocol.Allow,
		"export LANG=C": protocol.Allow, "export PATH=.": protocol.Deny, "export -f f": protocol.Deny,
		"export BASH_ENV=x": protocol.Deny, "read -r line": protocol.Allow, "read PATH": protocol.Deny,
		"read -p prompt IFS": protocol.Deny, "local x=1": protocol.Allow, "readonly PS4=x": protocol.Deny,
		"getopts ab opt": protocol.Allow, "getopts ab PATH": protocol.Deny, "printf %s x": protocol.Allow,
		"printf -v PATH x": protocol.Deny, "command -v rm": protocol.Allow, "command -p rm": protocol.Deny,
	} {
		argv := strings.Fields(line)
		v, why := builtins[argv[0]](g, argv)
		if v != want {
			t.Errorf("%q: %s (%s), want %s", line, v, why, want)
		}
	}
	for _, name := range []string{"eval", "source", ".", "exec", "trap", "alias", "hash", "enable", "builtin", "kill", "fc", "let", "declare", "typeset", "shopt"} {
		if _, ok := builtins[name]; ok {
			t.Errorf("%s is a builtin the guard allows", name)
		}
	}
}

// FuzzCheckSed: the sed reader never panics, and a script it allows
// holds none of the commands that run or write, wherever they stand.
func FuzzCheckSed(f *testing.F) {
	for _, s := range []string{"s/a/b/g", "1d;$d", "/x/{p;q}", "y/ab/cd/", "1i\\\nhead", "s/x/y/e", "1w out", "\\%x%p", "0~3p", "a text; more"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkSed(s) != nil {
			return
		}
		if checkSed(s) != nil {
			t.Fatal("not the same answer twice")
		}
	})
}

// FuzzCheckAwk: the awk reader never panics, and a program it allows
// holds no system, getline or @.
func FuzzCheckAwk(f *testing.F) {
	for _, s := range []string{"{print $1}", "BEGIN{x=1/2}", `{print > "f"}`, `BEGIN{system("x")}`, "/a|b/{print}", `{print "a" | "sh"}`, "x++ / 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkAwk(s) != nil {
			return
		}
		if strings.Contains(s, "system") || strings.Contains(s, "getline") || strings.Contains(s, "@") {
			t.Fatalf("%q allowed", s)
		}
	})
}

// FuzzLineRedirects: the line reader never panics, and every
// redirection it returns names a literal target.
func FuzzLineRedirects(f *testing.F) {
	for _, s := range []string{"echo > f", "cat < a >> b 2>&1", "true &> x", "ls >| y", "x=$(cat <in) > out", "cat <<EOF\nx\nEOF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := lineRedirects(s)
		if err != nil {
			return
		}
		for _, r := range rs {
			if strings.ContainsAny(r.Target, "$`") && !strings.Contains(s, r.Target) {
				t.Fatalf("%q: target %q is not in the line", s, r.Target)
			}
		}
	})
}

// TestReadLine: the variables a line sets, however it sets them.
func TestReadLine(t *testing.T) {
	for line, want := range map[string]string{
		"PATH=/x ls": "PATH", "for PATH in /x; do ls; done": "PATH", "((PATH=1))": "PATH", "((PATH+=1))": "PATH",
		"((PATH++))": "PATH", ": ${PATH:=/x}": "PATH", "declare PS4=x": "PS4", "export IFS=x": "IFS",
	} {
		_, names, err := readLine(line)
		if err != nil || !slices.Contains(names, want) {
			t.Errorf("%q: %v %v, want %s among them", line, names, err, want)
		}
	}
}
