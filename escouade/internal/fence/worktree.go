package fence

import (
	"path/filepath"
	"strings"

	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/manifest"
)

// Some programs run what a file in the folder they run in tells them to,
// with no argument asking for it: git reads the configuration of the
// repository it finds there (a folder holding HEAD, objects and refs is
// one, hidden .git or not), and runs core.fsmonitor, core.pager, hooks and
// filters from it; make runs a Makefile, npm and its kin a package.json's
// scripts, cargo a .cargo/config's runners, go a go.mod's toolchain,
// python and node import modules from it. Filtering their environment
// cannot stop configuration read from files, so such a program runs for a
// plugin only in a folder that plugin may not write: an agent's or a
// project's folder that no root of its permissions.files grants it write
// to, never its temporary folder. And git is given no configuration but
// the repository's own: no system or global file (GIT_CONFIG_NOSYSTEM,
// GIT_CONFIG_GLOBAL=/dev/null, which also keeps a .gitconfig in an agent's
// home out), no repository above the folder or above the agent's
// repository that holds it (GIT_CEILING_DIRECTORIES), and
// none of the variables that name a configuration, a repository or a
// program to run.

// treeRunners are the programs that run what their working folder says.
var treeRunners = map[string]bool{
	"git": true, "make": true, "gmake": true, "bmake": true,
	"npm": true, "npx": true, "pnpm": true, "yarn": true, "bun": true, "deno": true, "node": true,
	"cargo": true, "go": true, "mvn": true, "gradle": true,
	"rake": true, "bundle": true, "just": true,
	"python": true, "python3": true, "pip": true, "pip3": true, "tox": true, "poetry": true,
}

// treeRefusal says why command may not run in dir for the plugin, or "":
// dir is one the plugin may write, and command runs what is written there.
func (p *Plugin) treeRefusal(command, dir string, agent *Agent) string {
	if !treeRunners[command] {
		return ""
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "its folder cannot be judged"
	}
	why := command + " runs what the folder it runs in configures (" + treeRunnerWhat(command) + "), and the plugin may write "
	if tmp, err := p.h.TempDir(); err == nil {
		if t, err := filepath.EvalSymlinks(tmp); err == nil && beneath.Within(t, real) {
			return why + "its temporary folder: it runs only in an agent's or a project's folder the plugin may not write"
		}
	}
	for _, r := range p.fsRoots(agent) {
		if r.access == manifest.AccessWrite && beneath.Within(r.real, real) {
			return why + "that folder (permissions.files " + r.name + ": write)"
		}
	}
	return ""
}

func treeRunnerWhat(command string) string {
	switch command {
	case "git":
		return "a repository's config, hooks and filters"
	case "make", "gmake", "bmake", "just", "rake":
		return "its recipes"
	case "npm", "npx", "pnpm", "yarn", "bun", "deno":
		return "a package's scripts"
	case "python", "python3", "node":
		return "the modules it imports"
	}
	return "its build scripts and tools"
}

// gitKeeps are the GIT_* variables a git run for a plugin keeps: who
// writes a commit, and when; whether git may take locks. Every
// other one (GIT_CONFIG_*, GIT_DIR, GIT_EXEC_PATH, GIT_SSH_COMMAND,
// GIT_PAGER, GIT_EDITOR, GIT_ASKPASS, GIT_EXTERNAL_DIFF…) names a
// configuration, a repository or a program.
var gitKeeps = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_OPTIONAL_LOCKS": true,
}

// gitTop is the highest folder a git run in dir may take for its
// repository: the agent's repository (AgentRoots.Repo) when dir is in it,
// which the user named; else dir itself.
func gitTop(dir string, agent *Agent) string {
	if agent == nil || agent.Roots.Repo == "" {
		return dir
	}
	repo, err := filepath.EvalSymlinks(agent.Roots.Repo)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil && beneath.Within(repo, real) {
		return repo
	}
	return dir
}

// gitEnv pins the configuration of a git run in dir: env without the
// GIT_* variables that name one, and with the system's and the user's
// files and the folders above top (see gitTop) left out.
func gitEnv(env []string, top string) []string {
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(k), "GIT_") && !gitKeeps[k] {
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(top),
		"GIT_TERMINAL_PROMPT=0",
	)
}
