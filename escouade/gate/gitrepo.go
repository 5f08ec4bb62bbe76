package gate

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// What a git command runs is also in its repository: hooks, and config
// that names a program (core.fsmonitor, core.pager, core.hooksPath,
// aliases, filters, include.path…), which the agent may have written. So
// git is shown as what it is only in a repository with no hook and whose
// every config key is one the gate knows to run nothing; in any other, or
// when the gate cannot tell which repository (a line that changed
// folder), the request is dynamic.

// maxGitConfig bounds the config file the gate reads: a larger one is
// no config it vouches for.
const maxGitConfig = 64 << 10

// gitInertKeys are the config keys that run nothing, as section.key
// (a subsection's name left out), lower case.
var gitInertKeys = set("core.repositoryformatversion core.filemode core.bare core.logallrefupdates " +
	"core.ignorecase core.precomposeunicode core.symlinks core.autocrlf core.safecrlf core.eol " +
	"core.quotepath core.compression core.checkstat core.trustctime " +
	"remote.url remote.pushurl remote.fetch remote.push remote.tagopt remote.prune " +
	"branch.remote branch.merge branch.rebase branch.pushremote branch.description " +
	"user.name user.email init.defaultbranch extensions.objectformat http.extraheader pull.rebase pull.ff " +
	"push.default fetch.prune")

// gitDir returns the folder git takes for the repository of dir, as
// git discovers it (a .git folder or file in dir or a parent, or dir
// itself a bare repository), with the folder holding its config and
// hooks; "" when there is none.
func gitDir(dir string) (string, string) {
	// git walks up from the folder's real path (getcwd), not from the
	// name it was given: a link to a repository's subfolder is in that
	// repository.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			gd := dotGit
			if !fi.IsDir() {
				// A worktree's or a submodule's: "gitdir: <path>".
				b, err := os.ReadFile(dotGit)
				path, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if err != nil || !ok {
					return dotGit, dotGit // git refuses it; the gate reads it as unknown
				}
				gd = strings.TrimSpace(path)
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(d, gd)
				}
			}
			common := gd
			if b, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
				common = strings.TrimSpace(string(b))
				if !filepath.IsAbs(common) {
					common = filepath.Join(gd, common)
				}
			}
			return gd, common
		}
		if isGitDir(d) {
			return d, d
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// isGitDir reports whether dir looks to git like a repository's folder.
func isGitDir(dir string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}

// gitRepoInert reports whether the repository git acts on from dir (if
// any) has no hook, and a config of inert keys only.
func gitRepoInert(dir string) bool {
	gd, common := gitDir(dir)
	if gd == "" {
		return true
	}
	for _, c := range []string{common, gd} {
		if !gitConfigInert(filepath.Join(c, "config")) {
			return false
		}
	}
	hooks, err := os.ReadDir(filepath.Join(common, "hooks"))
	if err != nil && !os.IsNotExist(err) {
		return false
	}
	for _, h := range hooks {
		if !strings.HasSuffix(h.Name(), ".sample") {
			return false
		}
	}
	return true
}

// gitConfigInert reports whether the config file at path, if any,
// holds only inert keys, and no remote URL naming a transport program.
func gitConfigInert(path string) bool {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return true
	}
	if err != nil || len(b) > maxGitConfig {
		return false
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return false
			}
			name := strings.TrimSpace(line[1:end])
			if i := strings.IndexAny(name, " \t"); i >= 0 {
				name = name[:i] // [remote "origin"]
			} else if i := strings.IndexByte(name, '.'); i >= 0 {
				name = name[:i] // [remote.origin]
			}
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:]) // a key may follow on the line
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			return false // a value continued: not read further
		}
		key, value, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !gitInertKeys[section+"."+key] {
			return false
		}
		if key == "url" || key == "pushurl" {
			v := strings.Trim(strings.TrimSpace(value), `"`)
			if strings.Contains(v, "::") || strings.HasPrefix(v, "ext:") || strings.HasPrefix(v, "-") {
				return false // a transport helper, a command
			}
		}
	}
	return sc.Err() == nil
}

// inGitDir reports whether path is in a folder named .git: a line that
// writes there may plant the hook or config its git command then runs.
func inGitDir(path string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(path), "/"), ".git")
}
