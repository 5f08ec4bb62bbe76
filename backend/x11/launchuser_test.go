package x11

import (
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestLaunchUserApply: an app started as a LaunchUser gets its ids, its
// variables once each (over those of the daemon's environment), and its
// home folder, or its runtime folder when the home does not exist.
func TestLaunchUserApply(t *testing.T) {
	home, run := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		name, home, wantDir string
	}{
		{"home", home, home},
		{"no home", home + "/missing", run},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &LaunchUser{Name: "agent", UID: 1001, GID: 1002, Groups: []uint32{5}, Home: tc.home, Xauthority: "/s/agent/Xauthority", RuntimeDir: run}
			cmd := &exec.Cmd{SysProcAttr: &syscall.SysProcAttr{Setsid: true},
				Env: []string{"HOME=/root", "USER=root", "XAUTHORITY=/s/Xauthority", "PATH=/bin", "XDG_RUNTIME_DIR=/s/run", "LOGNAME=root", "XAUTHORITY=/s/again"}}
			u.apply(cmd)
			c := cmd.SysProcAttr.Credential
			if c == nil || c.Uid != 1001 || c.Gid != 1002 || !slices.Equal(c.Groups, []uint32{5}) || !cmd.SysProcAttr.Setsid {
				t.Fatalf("attributes %+v, credential %+v", cmd.SysProcAttr, c)
			}
			want := []string{"PATH=/bin", "HOME=" + tc.home, "USER=agent", "LOGNAME=agent", "XAUTHORITY=/s/agent/Xauthority", "XDG_RUNTIME_DIR=" + run}
			if !slices.Equal(cmd.Env, want) {
				t.Errorf("env\n%s\nwant\n%s", strings.Join(cmd.Env, "\n"), strings.Join(want, "\n"))
			}
			if cmd.Dir != tc.wantDir {
				t.Errorf("folder %q, want %q", cmd.Dir, tc.wantDir)
			}
		})
	}
}
