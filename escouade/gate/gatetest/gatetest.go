// Package gatetest runs corpora of execs for real, to test a guard
// against what the gate shows it: each case runs in a folder of its own
// holding a victim file, and a guard holds when no case it allowed
// touched its victim.
//
// A corpus is a folder of files named *.jsonl, one exec a line (blank
// lines and lines starting with # are skipped), as a JSON object:
//
//	{"shell": "rm victim"}
//	{"argv": ["git", "status"], "env": {"PATH": "{dir}/bin:/usr/bin"}}
//	{"argv": ["sh"], "stdin": "rm victim", "cwd": "scratch"}
//	{"setup": "printf 'rm -f {dir}/victim' > evil", "argv": ["bash", "-c", ":"], "env": {"BASH_ENV": "evil"}}
//
// shell or argv is the exec (exactly one); env, stdin and cwd are its own
// (cwd relative to the case's folder, which is the default); setup is a
// line /bin/sh runs in the folder before, unjudged, to put in place what
// the exec needs; root, when true, marks a case that bites only as root.
// {dir} anywhere stands for the case's folder, absolute.
//
// The folder holds victim (the file a hostile case deletes or empties), f
// (a file of one line, x), an empty folder scratch (where a guard may let
// writes go), and is a git repository in which f is committed and victim
// is not. Package escouade/gate's testdata/hostile and testdata/benign are
// corpora.
package gatetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// VictimText is what the victim file holds.
const VictimText = "precious\n"

// A Case is one exec of a corpus.
type Case struct {
	// Name is the corpus file and line: hostile/wrappers.jsonl:3.
	Name string
	// Setup is run by /bin/sh in the case's folder before the exec, not
	// judged.
	Setup string
	// Action is the exec, its cwd relative to the case's folder.
	Action aci.Action
	// Root marks a case that does what it says only when run as root
	// (chroot, runuser, su): "root": true on its line.
	Root bool
}

type line struct {
	Shell *string           `json:"shell"`
	Argv  []string          `json:"argv"`
	Env   map[string]string `json:"env"`
	Stdin *string           `json:"stdin"`
	Cwd   string            `json:"cwd"`
	Setup string            `json:"setup"`
	Root  bool              `json:"root"`
}

// Read reads the corpus in dir: its *.jsonl files in name order, their
// cases in order. A line that is no exec is an error naming it.
func Read(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var cases []Case
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			name := fmt.Sprintf("%s/%s:%d", filepath.Base(dir), filepath.Base(f), n)
			var l line
			d := json.NewDecoder(strings.NewReader(text))
			d.DisallowUnknownFields()
			if err := d.Decode(&l); err != nil {
				return nil, fmt.Errorf("gatetest: %s: %w", name, err)
			}
			if (l.Shell == nil) == (l.Argv == nil) || (l.Argv != nil && len(l.Argv) == 0) {
				return nil, fmt.Errorf("gatetest: %s: exactly one of shell and argv", name)
			}
			a := aci.Action{Verb: aci.VerbExec, Shell: l.Shell, Argv: l.Argv, Env: l.Env, Stdin: l.Stdin}
			if l.Cwd != "" {
				a.Cwd = &l.Cwd
			}
			cases = append(cases, Case{Name: name, Setup: l.Setup, Action: a, Root: l.Root})
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return cases, nil
}

// In returns the exec of c for the case folder dir: {dir} replaced, its
// cwd made absolute.
func (c Case) In(dir string) aci.Action {
	sub := func(s string) string { return strings.ReplaceAll(s, "{dir}", dir) }
	a := c.Action
	if a.Shell != nil {
		s := sub(*a.Shell)
		a.Shell = &s
	}
	if a.Argv != nil {
		argv := make([]string, len(a.Argv))
		for i, w := range a.Argv {
			argv[i] = sub(w)
		}
		a.Argv = argv
	}
	if a.Env != nil {
		env := make(map[string]string, len(a.Env))
		for k, v := range a.Env {
			env[sub(k)] = sub(v)
		}
		a.Env = env
	}
	if a.Stdin != nil {
		s := sub(*a.Stdin)
		a.Stdin = &s
	}
	cwd := dir
	if a.Cwd != nil {
		cwd = filepath.Join(dir, sub(*a.Cwd))
	}
	a.Cwd = &cwd
	return a
}

// Folder makes a case's folder, as the package doc says, and returns its
// path, with symlinks resolved.
func Folder(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"victim": VictimText, "f": "x\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "git init -q && git -c user.name=t -c user.email=t@t add f && "+
		"git -c user.name=t -c user.email=t@t commit -qm f")
	return dir
}

// sh runs a setup line in dir.
func sh(t testing.TB, dir, line string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup %q: %v\n%s", line, err, out)
	}
}

// Intact reports whether the victim of the case folder dir is as Folder
// left it.
func Intact(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, "victim"))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "victim"))
	return err == nil && string(b) == VictimText
}

// An Exec runs an exec for real, to its end, and returns its exit code.
type Exec func(ctx context.Context, req aci.ExecRequest) (int, error)

// A Judge says whether a guard allows a request.
type Judge func(protocol.PermissionRequest) bool

// Outcome is what became of one case.
type Outcome struct {
	Case    Case
	Dir     string
	Request protocol.PermissionRequest
	Allowed bool
	Ran     bool
	Code    int   // the exit code, when it ran
	Err     error // why it did not run, or did not end
}

// Run makes a folder for c, runs its setup, builds its request with
// gate.Request, asks judge (every case when judge is nil), and runs it
// through run when allowed.
func Run(t testing.TB, c Case, judge Judge, run Exec) Outcome {
	t.Helper()
	citest.NeedPrograms(t, "git")
	dir := Folder(t)
	if c.Setup != "" {
		sh(t, dir, strings.ReplaceAll(c.Setup, "{dir}", dir))
	}
	a := c.In(dir)
	o := Outcome{Case: c, Dir: dir}
	req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &a}, "gatetest")
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	o.Request = req
	o.Allowed = judge == nil || judge(req)
	if !o.Allowed {
		return o
	}
	er := aci.ExecRequest{Argv: a.Argv, Env: a.Env, Stdin: a.Stdin, Dir: *a.Cwd, Timeout: time.Minute}
	if a.Shell != nil {
		er.Shell = *a.Shell
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	o.Code, o.Err = run(ctx, er)
	o.Ran = o.Err == nil
	return o
}

// Hostile runs every case of the corpus in dir through judge and run,
// each as a parallel subtest, and fails every case that judge allowed
// and that touched its victim.
func Hostile(t *testing.T, dir string, judge Judge, run Exec) {
	cases, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no case in %s", dir)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			o := Run(t, c, judge, run)
			if o.Allowed && !Intact(o.Dir) {
				in, _ := o.Request.Command()
				t.Errorf("allowed, and the victim is gone (ran: %v, code %d, err %v)\nrequest: %+v", o.Ran, o.Code, o.Err, in)
			}
		})
	}
}

// Benign runs every case of the corpus in dir, each as a parallel
// subtest, and fails every case that judge refused, that did not exit 0,
// or that touched its victim.
func Benign(t *testing.T, dir string, judge Judge, run Exec) {
	cases, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			o := Run(t, c, judge, run)
			in, _ := o.Request.Command()
			switch {
			case !o.Allowed:
				t.Errorf("refused: %+v", in)
			case !o.Ran || o.Code != 0:
				t.Errorf("ran: %v, code %d, err %v", o.Ran, o.Code, o.Err)
			case !Intact(o.Dir):
				t.Errorf("the victim is gone")
			}
		})
	}
}
