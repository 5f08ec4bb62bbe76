package osexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"shinken.dev/go/shinken/aci"
)

// defaultPath is searched when the merged environment has no PATH, as a
// POSIX shell would, rather than finding nothing.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// mergeEnv returns base with over applied: a variable of over replaces the
// one of the same name in base, in place, and new ones follow in name order
// so that the child's environment does not depend on map order. When base
// names a variable twice the last one wins, as getenv in the child would
// otherwise pick either.
func mergeEnv(base []string, over map[string]string) ([]string, error) {
	env := make([]string, 0, len(base)+len(over))
	at := make(map[string]int, len(base)+len(over))
	for _, kv := range base {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if i, dup := at[k]; dup {
			env[i] = kv
			continue
		}
		at[k] = len(env)
		env = append(env, kv)
	}
	var added []string
	for k, v := range over {
		if !shellName(k) {
			return nil, fmt.Errorf("%w: exec: environment variable name %q: a name is letters, digits and _, not starting with a digit (the command's init, a POSIX shell, would not pass another on)", aci.ErrInvalidAction, k)
		}
		if i, ok := at[k]; ok {
			env[i] = k + "=" + v
			continue
		}
		added = append(added, k+"="+v)
	}
	slices.Sort(added)
	return append(env, added...), nil
}

// shellName reports whether k is a name a POSIX shell keeps in the
// environment it passes on: [A-Za-z_][A-Za-z0-9_]*. Every contained
// command starts below a shell (contain_linux.go), which drops any other
// name; such a name is refused everywhere, so that a request means the same
// on every kernel rather than being accepted and ignored.
func shellName(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// withoutShellCode returns env without BASH_ENV and ENV (a file a shell
// runs before its line) and BASH_FUNC_* (bash's exported functions, run
// by the name of a program): inherited from whoever started the daemon,
// they would make a line run what no gate saw. A request that sets them
// still gets them: what it asks is shown to the gate, and judged.
func withoutShellCode(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "BASH_ENV" || k == "ENV" || strings.HasPrefix(k, "BASH_FUNC_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// getenv returns the value of key in env, the last one if it repeats.
func getenv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// lookPath finds the program name on path. A name with a slash is used as
// it is, relative to the child's working directory as execve would take it.
// Relative PATH entries (including the empty one, meaning ".") are skipped,
// for the reason os/exec gives in ErrDot: a command should not run whatever
// program lies in the directory it happens to be in.
func lookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", spawnError(name+": executable file not found in PATH", exec.ErrNotFound)
}

// spawnError is the error of a command that could not be started.
func spawnError(detail string, cause error) error {
	return &aci.Error{Code: aci.CodeExecSpawnFailed, Detail: detail, Err: cause}
}

// explainSpawn turns the errno of a failed spawn into an error that says
// which step failed: the kernel reports the same ENOENT for a missing
// working directory as for a missing program.
func explainSpawn(err error, path, dir string) error {
	if dir != "" {
		fi, serr := os.Stat(dir)
		switch {
		case serr != nil:
			var pe *fs.PathError
			if errors.As(serr, &pe) {
				serr = pe.Err
			}
			return spawnError(fmt.Sprintf("chdir %s: %v", dir, serr), err)
		case !fi.IsDir():
			return spawnError(fmt.Sprintf("chdir %s: not a directory", dir), err)
		}
	}
	return spawnError(fmt.Sprintf("%s: %v", path, err), err)
}
