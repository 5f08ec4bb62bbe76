package guard

import (
	"strings"

	"shinken.dev/go/escouade/protocol"
)

// gitReads are the git subcommands allowed as they are: they read the
// repository, or record in it (add, commit) without running anything
// but the hooks and filters of a configuration the agent cannot edit
// (DefaultProtected holds .git, .gitconfig and .config/git).
var gitReads = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true,
	"ls-tree": true, "cat-file": true, "grep": true, "blame": true, "shortlog": true, "describe": true,
	"rev-list": true, "show-ref": true, "name-rev": true, "version": true, "branch": true,
	"add": true, "commit": true, "whatchanged": true, "merge-base": true, "count-objects": true,
}

// gitAsks are the git subcommands a person should approve: they change
// the work tree or the history, or talk to a remote (and its helpers).
var gitAsks = map[string]bool{
	"checkout": true, "switch": true, "restore": true, "reset": true, "stash": true, "merge": true,
	"rebase": true, "cherry-pick": true, "revert": true, "tag": true, "push": true, "pull": true,
	"fetch": true, "clone": true, "init": true, "rm": true, "mv": true, "clean": true, "am": true,
	"apply": true, "submodule": true, "worktree": true,
}

// gitRule: see DefaultRules.
func gitRule(argv []string) (protocol.Verdict, string) {
	i := 1
	for ; i < len(argv) && strings.HasPrefix(argv[i], "-"); i++ {
		a := argv[i]
		switch {
		case a == "--version" || a == "--help":
			return protocol.Allow, ""
		case a == "--no-pager" || a == "-P" || a == "--no-replace-objects" || a == "--literal-pathspecs" ||
			a == "--no-optional-locks" || a == "--no-advice":
		default:
			return protocol.Deny, a + " is not an option the guard allows (-c, -C, --config-env, --exec-path, --git-dir and --work-tree can run configured code)"
		}
	}
	if i == len(argv) {
		return protocol.Allow, "" // git alone prints its usage
	}
	sub, args := argv[i], argv[i+1:]
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "--open-files-in-pager") || a == "-O" ||
			strings.HasPrefix(a, "-O") && sub == "grep" || strings.HasPrefix(a, "--exec") || strings.HasPrefix(a, "--ext-diff") ||
			strings.HasPrefix(a, "--upload-pack") || strings.HasPrefix(a, "--receive-pack") || strings.HasPrefix(a, "--template") {
			return protocol.Deny, a + " writes a file or runs a program"
		}
	}
	switch {
	case gitReads[sub]:
		return protocol.Allow, ""
	case sub == "config":
		for _, a := range args {
			switch {
			case a == "--list" || a == "-l" || strings.HasPrefix(a, "--get") || a == "--show-origin" || a == "--show-scope" ||
				a == "--null" || a == "-z" || a == "--name-only" || a == "--local" || a == "--global" || a == "--system":
			default:
				if strings.HasPrefix(a, "-") || len(args) > 0 && !hasGet(args) {
					return protocol.Deny, "config changes the configuration (it can name programs git runs)"
				}
			}
		}
		if !hasGet(args) {
			return protocol.Deny, "config changes the configuration (it can name programs git runs)"
		}
		return protocol.Allow, ""
	case gitAsks[sub]:
		return protocol.Ask, sub + " changes the work tree or the history, or talks to a remote"
	}
	return protocol.Deny, sub + " is not a git command the guard knows (an alias, or one that runs programs)"
}

func hasGet(args []string) bool {
	for _, a := range args {
		if a == "--list" || a == "-l" || strings.HasPrefix(a, "--get") {
			return true
		}
	}
	return false
}
