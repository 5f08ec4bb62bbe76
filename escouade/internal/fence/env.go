package fence

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"shinken.dev/go/escouade/internal/contain"
	"shinken.dev/go/escouade/manifest"
)

// The environment of what the Host starts for a plugin (proc/spawn's
// programs, launch.shared's process) is built by allowlist, never by
// filtering out what is known to be dangerous: git, bash, node, python,
// perl and make each read variables that run anything (GIT_CONFIG_*,
// BASH_ENV, ENV, NODE_OPTIONS, PYTHONPATH, PERL5OPT, MAKEFILES,
// GIT_SSH_COMMAND…), and the list grows with every tool.

// safeEnv are the variables any plugin may set for a program it starts
// (proc/spawn's env), without naming them in permissions.env: they choose
// a language, a time zone, colours and a terminal's size, and run nothing.
var safeEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "LC_ALL": true, "LC_CTYPE": true, "LC_MESSAGES": true,
	"LC_COLLATE": true, "LC_NUMERIC": true, "LC_TIME": true, "LC_MONETARY": true,
	"TZ": true, "NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true,
	"COLUMNS": true, "LINES": true, "CI": true,
}

// minimalEnvNames are the Host's variables a program gets when there is
// no agent's environment to start from: where programs are found, who and
// where the user is, the language and time zone. No token, no secret, no
// ESCOUADE_*.
var minimalEnvNames = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES"}

// CommandEnv is the environment of a command plugin (run.command): the
// minimal one, the Go runtime's knobs (GODEBUG, GOMAXPROCS, GORACE: a
// plugin written in Go runs as the Host was told to run), and the Host's
// values of permitted, the variables its manifest names in
// permissions.env, which the user saw when the plugin was installed.
// Nothing else of the Host's: no token, no secret, none of ESCOUADE_*,
// whatever the manifest says.
func CommandEnv(permitted []string) []string {
	env := MinimalEnv()
	names := append(append([]string(nil), contain.RuntimeVars...), permitted...)
	for _, k := range names {
		if manifest.NeverSet(k) != "" || slices.Contains(minimalEnvNames, k) {
			continue
		}
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// MinimalEnv returns the Host's values of the variables a program gets
// when there is no agent's environment to start from.
func MinimalEnv() []string {
	env := make([]string, 0, len(minimalEnvNames))
	for _, k := range minimalEnvNames {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// envRefusal says why the plugin may not set key for a program, or "": a
// variable is set only when it is of the safe set or named, as written,
// in permissions.env.
func (p *Plugin) envRefusal(key string) string {
	if why := manifest.NeverSet(key); why != "" {
		return why + " may never be set"
	}
	if safeEnv[key] {
		return ""
	}
	for _, k := range p.cfg.Env {
		if k == key {
			return ""
		}
	}
	return "not a variable of permissions.env, nor of the safe set (LANG, LC_*, TZ, NO_COLOR, FORCE_COLOR, CLICOLOR, COLUMNS, LINES, CI)"
}

// valueRefusal says why value may not be given to key, a variable of the
// safe set, or "". A locale's name never holds a path: gettext takes
// LANGUAGE=../../x, and the others, as folders under its catalogs', which
// would load a catalog the plugin wrote; nor does TZ name a file (/x, :x)
// or leave the zone folder (..).
func valueRefusal(key, value string) string {
	switch {
	case key == "LANG" || key == "LANGUAGE" || strings.HasPrefix(key, "LC_"):
		for _, c := range value {
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_.@-+=,", c) || (c == ':' && key == "LANGUAGE")
			if !ok {
				return fmt.Sprintf("%q is not a locale's name (letters, digits and _.@-+=,; LANGUAGE a list of them, separated by :)", value)
			}
		}
		if strings.Contains(value, "..") {
			return fmt.Sprintf("%q is not a locale's name", value)
		}
	case key == "TZ":
		if strings.HasPrefix(value, "/") || strings.HasPrefix(value, ":") || strings.Contains(value, "..") {
			return fmt.Sprintf("%q names a file: a time zone is named (Europe/Paris, UTC)", value)
		}
	}
	return ""
}
