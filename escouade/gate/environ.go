package gate

import "strings"

// codeVars are the variables that make a shell, the loader or a program
// run code, or read it from a file the agent may have written: set in a
// line, by a wrapper or in an exec's env, they make the request dynamic.
// The list is of the shells', the loader's and the programs a realistic
// allowlist holds; a guard that allows a program it does not list trusts
// that program's own variables.
var codeVars = map[string]bool{
	// the shells: files read at start, options, prompts and traces
	// expanded as lines, the word splitting every expansion goes by
	"BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true, "PS0": true, "PS1": true,
	"PS2": true, "PS3": true, "PS4": true, "PROMPT_COMMAND": true, "IFS": true, "CDPATH": true,
	"HOME": true, "ZDOTDIR": true, "FPATH": true, "INPUTRC": true, "HISTFILE": true,
	"EXECIGNORE": true, "GLOBIGNORE": true, "TEXTDOMAIN": true, "TEXTDOMAINDIR": true, "SHELL": true,
	"XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_DATA_DIRS": true, "XDG_CONFIG_DIRS": true,
	// the loader and the C library
	"GCONV_PATH": true, "LOCPATH": true, "NLSPATH": true, "HOSTALIASES": true, "RESOLV_HOST_CONF": true,
	"MALLOC_CHECK_": true, "TMPDIR": false,
	// programs that run a program a variable names
	"PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true, "BROWSER": true, "LESSOPEN": true,
	"LESSCLOSE": true, "LESSKEY": true, "LESS": true, "MANOPT": true, "TAR_OPTIONS": true, "GREP_OPTIONS": true,
	"SUDO_ASKPASS": true, "SSH_ASKPASS": true, "MAILCAPS": true, "MAKEFLAGS": true, "MAKEFILES": true,
	"MFLAGS": true, "GNUMAKEFLAGS": true, "PERL5OPT": true, "PERL5LIB": true,
	"PERLLIB": true, "PERL5DB": true, "PERL_MB_OPT": true, "NODE_OPTIONS": true, "NODE_PATH": true,
	"RUBYOPT": true, "RUBYLIB": true, "TCLLIBPATH": true, "LUA_INIT": true, "LUA_PATH": true,
	"LUA_CPATH": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true,
	"CLASSPATH": true, "AWKPATH": true, "AWKLIBPATH": true,
	"VIMINIT": true, "EXINIT": true, "MYVIMRC": true, "PYENV_VERSION": true, "PYENV_ROOT": true,
}

// codePrefixes are the families of such variables.
var codePrefixes = []string{
	"BASH_FUNC_", // exported functions, run by the name of a program
	"LD_",        // the loader: LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT…
	"GIT_",       // git's config, exec path, ssh, editor, pager, external diff…
	"PYTHON",     // PYTHONSTARTUP, PYTHONPATH, PYTHONHOME…
	"PERL",
	"NPM_CONFIG_",
	"DYLD_",
}

// runsCode reports whether setting the variable name may make what runs
// other than what the request shows.
func runsCode(name string) bool {
	if codeVars[name] {
		return true
	}
	for _, p := range codePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
