package gate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestGitRepositoryRunsCode: a git command in a repository whose hooks
// or config run a program is dynamic, and each is run for real with git
// to show that it deletes its victim; in a repository git made, and
// nothing planted, the same command is not dynamic and deletes nothing.
func TestGitRepositoryRunsCode(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed:", err)
	}
	t.Parallel()
	type planted func(t *testing.T, repo, victim string)
	config := func(text string) planted {
		return func(t *testing.T, repo, victim string) {
			f, err := os.OpenFile(filepath.Join(repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(text + "\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	hook := func(dir, name string) func(t *testing.T, repo, victim string) string {
		return func(t *testing.T, repo, victim string) string {
			d := filepath.Join(repo, dir)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, name), []byte("#!/bin/sh\nrm -f "+victim+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	status := []string{"git", "status"}
	commit := []string{"git", "commit", "-q", "--allow-empty", "-m", "x"}
	for _, tt := range []struct {
		name    string
		plant   planted
		argv    []string
		line    string // run by sh instead of argv
		dynamic bool
	}{
		{"nothing planted, status", nil, status, "", false},
		{"nothing planted, commit", nil, commit, "", false},
		{"a pre-commit hook", func(t *testing.T, repo, victim string) { hook(".git/hooks", "pre-commit")(t, repo, victim) },
			commit, "", true},
		{"core.hooksPath", func(t *testing.T, repo, victim string) {
			hook("elsewhere", "pre-commit")(t, repo, victim)
			config("[core]\n\thooksPath = elsewhere")(t, repo, victim)
		}, commit, "", true},
		{"core.fsmonitor", func(t *testing.T, repo, victim string) {
			config("[core]\n\tfsmonitor = rm -f "+victim)(t, repo, victim)
		}, status, "", true},
		{"include.path", func(t *testing.T, repo, victim string) {
			inc := filepath.Join(repo, "inc")
			if err := os.WriteFile(inc, []byte("[core]\n\tfsmonitor = rm -f "+victim+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			config("[include]\n\tpath = "+inc)(t, repo, victim)
		}, status, "", true},
		{"config planted by the line", nil, nil, `printf '[core]\n\tfsmonitor = rm -f %s\n' "VICTIM" >> .git/config; git status`, true},
		{"config planted by tee", nil, nil, `printf '[core]\n\tfsmonitor = rm -f VICTIM\n' | tee -a .git/config; git status`, true},
		{"config planted by sort -o", nil, nil, `printf '[core]\nfsmonitor = rm -f VICTIM\n' | sort -o .git/config; git status`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, home := t.TempDir(), t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a",
				"GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a")
			run := func(argv ...string) {
				t.Helper()
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = repo, env
				if out, err := cmd.CombinedOutput(); err != nil && !tt.dynamic {
					t.Fatalf("%v: %v\n%s", argv, err, out)
				}
			}
			run("git", "init", "-q")
			if tt.plant != nil {
				tt.plant(t, repo, victim)
			}
			action := aci.Action{Argv: tt.argv, Cwd: &repo}
			if tt.line != "" {
				line := strings.ReplaceAll(tt.line, "VICTIM", victim)
				action = aci.Action{Shell: &line, Cwd: &repo}
			}
			req, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &action}, "r")
			if err != nil {
				t.Fatal(err)
			}
			in, err := req.Command()
			if err != nil {
				t.Fatal(err)
			}
			if in.Dynamic != tt.dynamic {
				t.Errorf("dynamic %v, want %v", in.Dynamic, tt.dynamic)
			}
			// The same command typed at a shell whose working folder is the
			// repository (its cd on a line before) reads the same.
			typed := strings.Join(tt.argv, " ")
			if tt.line != "" {
				typed = strings.ReplaceAll(tt.line, "VICTIM", victim)
			}
			treq, err := gate.Request(shinken.AuthRequest{Verb: aci.VerbExec, Action: &aci.Action{Verb: aci.VerbExec},
				Intent: &shinken.Intent{Tool: "shell", Kind: "command", Line: typed + "\n", Dir: repo}}, "t")
			if err != nil {
				t.Fatal(err)
			}
			tin, err := treq.Command()
			if err != nil {
				t.Fatal(err)
			}
			if tin.Dynamic != tt.dynamic || tin.Cwd != repo {
				t.Errorf("typed at a shell in the repository: dynamic %v, cwd %q; want %v, %q", tin.Dynamic, tin.Cwd, tt.dynamic, repo)
			}
			if tt.line != "" {
				run("sh", "-c", *action.Shell)
			} else {
				run(tt.argv...)
			}
			_, err = os.Stat(victim)
			if deleted := os.IsNotExist(err); deleted != tt.dynamic {
				t.Errorf("run for real: victim deleted %v, want %v (the case does not show what it claims)", deleted, tt.dynamic)
			}
		})
	}
}

// TestGitRepositoryThroughLink: a folder named through a link to a
// repository's subfolder is in that repository, as git finds it from the
// real path: git status there, as an exec's cwd or typed at a shell there,
// is dynamic when the repository's config runs a program, and run for
// real it does.
func TestGitRepositoryThroughLink(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed:", err)
	}
	repo, home := t.TempDir(), t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	f, err := os.OpenFile(filepath.Join(repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[core]\n\tfsmonitor = rm -f " + victim + "\n")
	f.Close()
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]shinken.AuthRequest{
		"exec": {Verb: aci.VerbExec, Action: &aci.Action{Verb: aci.VerbExec, Argv: []string{"git", "status"}, Cwd: &link}},
		"typed": {Verb: aci.VerbExec, Action: &aci.Action{Verb: aci.VerbExec},
			Intent: &shinken.Intent{Tool: "shell", Kind: "command", Line: "git status\n", Dir: link}},
	} {
		preq, err := gate.Request(req, "r")
		if err != nil {
			t.Fatal(err)
		}
		in, err := preq.Command()
		if err != nil {
			t.Fatal(err)
		}
		if !in.Dynamic {
			t.Errorf("%s: git status in a link to the repository's subfolder is not dynamic", name)
		}
	}
	cmd = exec.Command("git", "status")
	cmd.Dir, cmd.Env = link, env
	cmd.Run()
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Error("run for real, git status left the victim: the case does not show what it claims")
	}
}
