package guard_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// agentAllow is the allowlist of a realistic coding agent.
var agentAllow = []string{"ls", "cat", "grep", "find", "git", "python3", "make", "echo", "sed", "head", "tail", "wc", "sort", "awk", "true"}

// sandbox is a folder for one test: a victim file outside the agent's
// writable root (work), and a guard for a realistic agent.
type sandbox struct {
	dir, work, victim string
	g                 *guard.Guard
}

const precious = "precious\n"

func newSandbox(t *testing.T, p *guard.Policy) *sandbox {
	t.Helper()
	citest.NeedPrograms(t, agentAllow...)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &sandbox{dir: dir, work: filepath.Join(dir, "work"), victim: filepath.Join(dir, "victim")}
	if err := os.Mkdir(s.work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.victim, []byte(precious), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.work, "notes.txt"), []byte("alpha beta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var pol guard.Policy
	if p != nil {
		pol = *p
	}
	if pol.Allow == nil {
		pol.Allow = agentAllow
	}
	if pol.Write == nil {
		pol.Write = []string{s.work}
	}
	if s.g, err = guard.New(&pol); err != nil {
		t.Fatal(err)
	}
	return s
}

// request is the gate's request for an exec action.
func request(t *testing.T, a aci.Action) protocol.PermissionRequest {
	t.Helper()
	req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &a}, "t")
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func shell(line, cwd string) aci.Action { return aci.Action{Shell: &line, Cwd: &cwd} }

func argv(cwd string, words ...string) aci.Action { return aci.Action{Argv: words, Cwd: &cwd} }

// TestJudge: commands of a realistic agent are allowed, asked about or
// refused, each through the gate's own request.
func TestJudge(t *testing.T) {
	s := newSandbox(t, nil)
	w := s.work
	tests := []struct {
		name   string
		action aci.Action
		want   protocol.Verdict
	}{
		{"ls", argv(w, "ls", "-la"), protocol.Allow},
		{"pipeline", shell("cat notes.txt | grep a | sort | head -3 | wc -l", w), protocol.Allow},
		{"find by name", shell("find . -name '*.txt' -type f", w), protocol.Allow},
		{"git status", argv(w, "git", "status"), protocol.Allow},
		{"git log", shell("git log --oneline -3 || true", w), protocol.Allow},
		{"sed print", shell("sed -n 's/alpha/omega/p; 2q' notes.txt", w), protocol.Allow},
		{"sed braces", argv(w, "sed", "-n", "/a/{p;=}", "notes.txt"), protocol.Allow},
		{"grep counts", shell(`grep -c -E 'a{1,2}' notes.txt`, w), protocol.Allow},
		{"redirect in root", shell("echo hi > out.txt && cat out.txt", w), protocol.Allow},
		{"redirect to null", shell("ls nothing 2>/dev/null; true", w), protocol.Allow},
		{"python version", argv(w, "python3", "--version"), protocol.Allow},
		{"set -e and cd", shell("set -eu; cd .. && cd work && ls", w), protocol.Allow},
		{"locale env", aci.Action{Argv: []string{"sort", "notes.txt"}, Cwd: &w, Env: map[string]string{"LC_ALL": "C"}}, protocol.Allow},
		{"the shell form by argv", argv(w, "/bin/sh", "-c", "ls"), protocol.Allow},

		{"make", argv(w, "make"), refused},
		{"make's version", argv(w, "make", "--version"), protocol.Allow},
		{"python code", argv(w, "python3", "-c", "print(1)"), refused},
		{"git push", argv(w, "git", "push"), protocol.Ask},

		{"rm", argv(w, "rm", s.victim), protocol.Deny},
		{"rm in a line", shell("ls; rm "+s.victim, w), protocol.Deny},
		{"find -delete", shell("find .. -name victim -delete", w), protocol.Deny},
		{"sed -i", argv(w, "sed", "-i", "d", s.victim), protocol.Deny},
		{"sed e", argv(w, "sed", "1e rm x", "notes.txt"), protocol.Deny},
		{"awk system", shell(`awk 'BEGIN{system("rm x")}'`, w), protocol.Deny},
		{"git -c", argv(w, "git", "-c", "alias.x=!rm x", "x"), protocol.Deny},
		{"dynamic", shell("$(echo rm) x", w), protocol.Deny},
		{"write outside the root", shell("echo > "+s.victim, w), protocol.Deny},
		{"write after cd", shell("cd .. && : > victim", w), protocol.Deny},
		{"write in a nested line", shell("sh -c ': > ../victim'", w), protocol.Deny},
		{"protected", shell("echo x > .bashrc", w), protocol.Deny},
		{"PATH env", aci.Action{Argv: []string{"git", "status"}, Cwd: &w, Env: map[string]string{"PATH": w + ":/usr/bin"}}, protocol.Deny},
		{"GIT_CONFIG env", aci.Action{Argv: []string{"git", "status"}, Cwd: &w, Env: map[string]string{"GIT_CONFIG_COUNT": "1"}}, protocol.Deny},
		{"BASH_ENV in a line", shell("BASH_ENV=x ls", w), protocol.Deny},
		{"interpreter on stdin", aci.Action{Argv: []string{"python3"}, Cwd: &w, Stdin: ptr("import os")}, refused},
		{"sh on stdin", aci.Action{Argv: []string{"sh"}, Cwd: &w, Stdin: ptr("rm x")}, protocol.Deny},
		{"eval", shell("eval ls", w), protocol.Deny},
		{"brace expansion", shell("find . -name victim -{delete,print}", w), protocol.Deny},
		{"bash's $-string", shell(`find . $"-delete"`, w), protocol.Deny},
		{"braces in quotes", shell(`grep -E '(al|ga){1,2}' notes.txt`, w), protocol.Allow},
		{"PATH by for", shell("for PATH in "+w+"; do ls; done", w), protocol.Deny},
		{"PATH by arithmetic", shell("((PATH=1)); ls", w), protocol.Deny},
		{"IFS set", shell("IFS=/; ls", w), protocol.Deny},
		{"a variable of its own", shell("x=1; for f in a b; do ls; done", w), protocol.Allow},
		{"not found", argv(w, "no-such-program"), protocol.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := s.g.Judge(request(t, tt.action))
			if tt.want == refused && d.Verdict != protocol.Allow {
				return // asked about, or refused: a gate may show it as dynamic
			}
			if d.Verdict != tt.want {
				t.Fatalf("%s, want %s", describe(d), tt.want)
			}
			if d.Verdict != protocol.Allow && d.Message == "" {
				t.Errorf("a %s names no reason", d.Verdict)
			}
		})
	}
}

// refused is a case's want when an ask and a deny both hold: the
// request runs code it does not show, which a gate may mark dynamic.
const refused protocol.Verdict = "ask or deny"

func ptr[T any](v T) *T { return &v }

func describe(d protocol.Decision) string {
	if d.Message == "" {
		return string(d.Verdict)
	}
	return string(d.Verdict) + ": " + d.Message
}

// TestIdentity: a program passes by its file, never by its name: a copy
// of rm named ls, a link to rm named ls, a copy of ls itself, and ls run
// under the name of another allowed program are all refused.
func TestIdentity(t *testing.T) {
	s := newSandbox(t, nil)
	rm, err := exec.LookPath("rm")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, rm, filepath.Join(s.dir, "rmcopy", "ls"))
	copyFile(t, ls, filepath.Join(s.dir, "lscopy", "ls"))
	link := filepath.Join(s.dir, "rmlink", "ls")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(rm, link); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(s.dir, "renamed", "cat")
	os.MkdirAll(filepath.Dir(cat), 0o755)
	if err := os.Symlink(ls, cat); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		filepath.Join(s.dir, "rmcopy", "ls"): "is not on the allowlist",
		link:                                 "is not on the allowlist",
		filepath.Join(s.dir, "lscopy", "ls"): "is not on the allowlist",
		cat:                                  "under another name",
	} {
		d := s.g.Judge(request(t, argv(s.work, name, s.victim)))
		if d.Verdict != protocol.Deny || !strings.Contains(d.Message, want) {
			t.Errorf("%s: %s, want a deny that says %q", name, describe(d), want)
		}
	}
	// The message names the program, its file and its hash.
	d := s.g.Judge(request(t, argv(s.work, "rm", s.victim)))
	if !strings.HasPrefix(d.Message, "rm ("+mustReal(t, rm)+", sha256 ") {
		t.Errorf("rm: %q", d.Message)
	}
	// Under its own name, by any path, ls passes.
	if d := s.g.Judge(request(t, argv(s.work, ls, "-d", "."))); d.Verdict != protocol.Allow {
		t.Errorf("%s: %s", ls, describe(d))
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestProgramID: when the gate shows a program's identity, the guard
// matches it rather than the file's name.
func TestProgramID(t *testing.T) {
	s := newSandbox(t, nil)
	req := request(t, argv(s.work, "ls"))
	in, err := req.Command()
	if err != nil {
		t.Fatal(err)
	}
	// A gate that says ls's file is rm's bytes: refused by what it says.
	in.ProgramID = &protocol.FileID{SHA256: strings.Repeat("ab", 32)}
	in.Commands[0].ProgramID = in.ProgramID
	req.Input = in.Map()
	if d := s.g.Judge(req); d.Verdict != protocol.Deny || !strings.Contains(d.Message, "sha256 abababababab…") {
		t.Errorf("%s", describe(d))
	}
}

// hostileLines reads the hostile corpora: this package's, and the
// gate's when it has one.
func hostileLines(t *testing.T, s *sandbox) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"testdata/hostile", "../gate/testdata/hostile"} {
		f, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		files = append(files, f...)
	}
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		var cont string
		for sc.Scan() {
			l := sc.Text()
			if cont != "" {
				l, cont = cont+"\n"+l, ""
			}
			if strings.HasSuffix(l, ",") { // a line that goes on (awk's print a,\n b)
				cont = l
				continue
			}
			if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
				continue
			}
			lines = append(lines, strings.NewReplacer("{victim}", s.victim, "{dir}", s.dir).Replace(l))
		}
	}
	if len(lines) < 100 {
		t.Fatalf("%d hostile lines, want at least 100", len(lines))
	}
	return lines
}

// TestHostileLines: every hostile line is judged through the gate and
// the guard, and the ones allowed run for real (cwd and HOME the
// victim's folder): none deletes or changes the victim.
func TestHostileLines(t *testing.T) {
	s := newSandbox(t, nil)
	lines := hostileLines(t, s)
	allowed := 0
	for _, line := range lines {
		d := s.g.Judge(request(t, shell(line, s.dir)))
		if d.Verdict != protocol.Allow {
			if d.Message == "" {
				t.Errorf("%q: a %s with no reason", line, d.Verdict)
			}
			continue
		}
		allowed++
		runLine(t, s, line)
		if b, err := os.ReadFile(s.victim); err != nil || string(b) != precious {
			t.Errorf("%q was allowed and changed the victim (%q, %v)", line, b, err)
			os.WriteFile(s.victim, []byte(precious), 0o644)
		}
	}
	t.Logf("%d hostile lines, %d allowed and run, none touched the victim", len(lines), allowed)
}

// runLine runs a line as the runtime would, in the victim's folder.
func runLine(t *testing.T, s *sandbox, line string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "HOME="+s.dir)
	cmd.WaitDelay = time.Second
	cmd.Run() // a hostile line may well fail: only the victim matters
}

// TestApps: launch_app of a name in Policy.Apps is allowed whatever its
// arguments (a desktop's own application is no program file); any other
// is judged as the command it runs.
func TestApps(t *testing.T) {
	s := newSandbox(t, &guard.Policy{Apps: []string{"notes"}})
	launch := func(app string, args ...string) protocol.Verdict {
		req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbLaunchApp, Action: &aci.Action{Verb: aci.VerbLaunchApp, App: &app, Args: args}}, "t")
		if err != nil {
			t.Fatal(err)
		}
		return s.g.Judge(req).Verdict
	}
	if v := launch("notes", "--anything"); v != protocol.Allow {
		t.Errorf("launch_app notes: %s", v)
	}
	if v := launch("rm", "-rf", s.victim); v == protocol.Allow {
		t.Errorf("launch_app rm: allowed")
	}
}
