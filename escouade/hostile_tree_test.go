package escouade_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

// TestHostileGitConfig: with only the entry "git status", a plugin that may
// write files plants a repository (HEAD, objects, refs and a config whose
// core.fsmonitor is any command) in its temporary folder, or in an agent's
// folder it may write: git would take the folder for a repository and run
// the command. Such a program runs only in a folder the plugin may not
// write; there, in a repository the user made, git reads no configuration
// but the repository's own (not the user's ~/.gitconfig, which an agent's
// home may be).
func TestHostileGitConfig(t *testing.T) {
	h, _, work, base := procHost(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	plant := func(lp *linePlugin, root string) {
		t.Helper()
		for name, text := range map[string]string{
			"HEAD":         "ref: refs/heads/main\n",
			"objects/keep": "",
			"refs/keep":    "",
			"config":       "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch " + marker + "; false\"\n",
		} {
			if err := lp.call("fs/write", map[string]any{"agent": "k1", "root": root, "path": name, "text": text}, nil); err != nil {
				t.Fatalf("fs/write %s: %v", name, err)
			}
		}
	}
	for _, tt := range []struct{ name, files, root, dir string }{
		{"temp", `{"temp":"write"}`, "temp", ""},
		{"agent written", `{"agent":"write"}`, "agent", "agent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lp := startLinePlugin(t, h, nil, "git-"+strings.ReplaceAll(tt.name, " ", "-"), `,"permissions":{"commands":["git status","make","python3 -m json.tool"],"files":`+tt.files+`}`, "")
			if err := lp.p.Attach(context.Background(), "k1"); err != nil {
				t.Fatal(err)
			}
			plant(lp, tt.root)
			for _, argv := range [][]string{{"git", "status"}, {"make"}, {"python3", "-m", "json.tool"}} {
				params := map[string]any{"command": argv[0], "args": argv[1:], "agent": "k1"}
				if tt.dir != "" {
					params["dir"] = tt.dir
				}
				err := lp.call("proc/spawn", params, nil)
				wantCode(t, strings.Join(argv, " "), err, protocol.CodeRefused)
				if err != nil && !strings.Contains(err.Error(), "may write") {
					t.Errorf("%v: the refusal does not say why: %v", argv, err)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the planted configuration ran")
			}
		})
	}
	t.Run("a repository the user made", func(t *testing.T) {
		repo := exec.Command("git", "init", "-q", work)
		repo.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
		if out, err := repo.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		// The agent's home is base: its .gitconfig is not the
		// repository's, and is not read.
		gitconfig := "[core]\n\tfsmonitor = \"touch " + marker + "; false\"\n[safe]\n\tdirectory = *\n"
		if err := os.WriteFile(filepath.Join(base, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
			t.Fatal(err)
		}
		lp := startLinePlugin(t, h, nil, "git-read", `,"permissions":{"commands":["git status --porcelain"],"files":{"agent":"read"}}`, "")
		if err := lp.p.Attach(context.Background(), "k1"); err != nil {
			t.Fatal(err)
		}
		if _, code := lp.run(t, map[string]any{"command": "git", "args": []string{"status", "--porcelain"}, "agent": "k1", "dir": "agent"}); num(code) != 0 {
			t.Errorf("git status in the user's repository: code %v", code)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("git read the agent's ~/.gitconfig")
		}
	})
	t.Run("an agent's folder inside the repository it names", func(t *testing.T) {
		repo := t.TempDir()
		sub := filepath.Join(repo, "sub")
		os.Mkdir(sub, 0o755)
		initRepo := exec.Command("git", "init", "-q", repo)
		initRepo.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
		if out, err := initRepo.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		hr, _ := newHost(t, &escouade.Options{TempDir: t.TempDir(), Agents: escouade.AgentMap{
			"k": {Agent: protocol.Agent{ID: "a", Name: "A"}, Roots: escouade.AgentRoots{Agent: sub, Repo: repo}, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}},
		}})
		lp := startLinePlugin(t, hr, nil, "git-sub", `,"permissions":{"commands":["git rev-parse --show-toplevel"]}`, "")
		if err := lp.p.Attach(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
		out, code := lp.run(t, map[string]any{"command": "git", "args": []string{"rev-parse", "--show-toplevel"}, "agent": "k", "dir": "agent"})
		real, _ := filepath.EvalSymlinks(repo)
		if num(code) != 0 || strings.TrimSpace(out) != real {
			t.Errorf("git in the agent's folder found %q (code %v), want its repository %s", out, code, real)
		}
	})
}
