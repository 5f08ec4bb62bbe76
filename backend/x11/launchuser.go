package x11

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
)

// A LaunchUser is the agent's own user, for Launch's apps, so that they
// cannot change this process's files or signal it. They start in its home
// (else its runtime folder) and end when this process does, even killed
// (a parent-death signal). The display and buses must admit it:
// session.Options.AgentUser sets a session up so.
type LaunchUser struct {
	// Name is the login name, given to apps as USER and LOGNAME.
	Name string
	// UID and GID are the user and primary group ids.
	UID, GID uint32
	// Groups are the supplementary group ids; empty means none.
	Groups []uint32
	// Home is the home folder, given to apps as HOME.
	Home string
	// Xauthority is an authority file holding the display's cookie that
	// the user can read, given to apps as XAUTHORITY; "" means
	// Options.Xauthority.
	Xauthority string
	// RuntimeDir is a folder of the user's, given to apps as
	// XDG_RUNTIME_DIR; "" leaves the variable as the environment has it.
	RuntimeDir string
}

// apply makes cmd start as u: its credential, its variables over
// cmd.Env, its folder.
func (u *LaunchUser) apply(cmd *exec.Cmd) {
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: slices.Clone(u.Groups)}
	set := []string{"HOME=" + u.Home, "USER=" + u.Name, "LOGNAME=" + u.Name}
	if u.Xauthority != "" {
		set = append(set, "XAUTHORITY="+u.Xauthority)
	}
	if u.RuntimeDir != "" {
		set = append(set, "XDG_RUNTIME_DIR="+u.RuntimeDir)
	}
	cmd.Env = override(cmd.Env, set)
	cmd.Dir = u.RuntimeDir
	if fi, err := os.Stat(u.Home); err == nil && fi.IsDir() {
		cmd.Dir = u.Home
	}
}

// override returns env without the keys of set, followed by set.
func override(env, set []string) []string {
	drop := make(map[string]bool, len(set))
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
