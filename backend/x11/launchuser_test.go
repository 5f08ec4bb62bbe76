package x11

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/shinken/aci"
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

// TestLaunchAsUser: with a LaunchUser, the app runs with the user's ids,
// its HOME, USER and runtime folder, in a session of its own; a program
// the user may not run is ErrNoSuchApp, and the backend stays usable.
func TestLaunchAsUser(t *testing.T) {
	u := agentusertest.Need(t)
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chown(dir, int(u.UID), int(u.GID))
	s := newSession(t, nil, &Options{LaunchUser: &LaunchUser{Name: u.Name, UID: u.UID, GID: u.GID, Groups: u.Groups, Home: u.Home, RuntimeDir: dir}})
	ctx := ctxT(t)

	private := filepath.Join(t.TempDir(), "private")
	os.WriteFile(private, []byte("#!/bin/sh\n"), 0o700)
	if err := s.b.Launch(ctx, private, nil); !errors.Is(err, aci.ErrNoSuchApp) {
		t.Fatalf("Launch of a program the user may not run: %v", err)
	}

	out := filepath.Join(dir, "out")
	script := `{ id -u; id -g; echo "$HOME $USER $LOGNAME $XDG_RUNTIME_DIR"; set -- $(cat /proc/$$/stat); echo "$1 $6"; } > "$0.tmp"; mv "$0.tmp" "$0"`
	if err := s.b.Launch(ctx, "/bin/sh", []string{"-c", script, out}); err != nil {
		t.Fatal(err)
	}
	var got []byte
	waitFor(t, "the launched script", func() bool {
		var err error
		got, err = os.ReadFile(out)
		return err == nil
	})
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	want := []string{fmt.Sprint(u.UID), fmt.Sprint(u.GID), u.Home + " " + u.Name + " " + u.Name + " " + dir}
	if len(lines) != 4 || !slices.Equal(lines[:3], want) {
		t.Fatalf("got %q, want %q then the pid and session id", lines, want)
	}
	if f := strings.Fields(lines[3]); len(f) != 2 || f[0] != f[1] {
		t.Fatalf("pid and session id %q: not a session leader", lines[3])
	}
	waitFor(t, "the launched script reaped", func() bool { return len(s.b.launched.running()) == 0 })
}

// BenchmarkLaunchAsUser is what Launch costs as the agent's user (a
// credential, a parent-death signal from a locked thread) against
// Launch as this process's user, for /bin/true.
func BenchmarkLaunchAsUser(b *testing.B) {
	u := agentusertest.Need(b)
	for _, bc := range []struct {
		name string
		user *LaunchUser
	}{
		{"self", nil},
		{"agent", &LaunchUser{Name: u.Name, UID: u.UID, GID: u.GID, Groups: u.Groups, Home: u.Home}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newSession(b, nil, &Options{LaunchUser: bc.user})
			ctx := ctxT(b)
			for b.Loop() {
				if err := s.b.Launch(ctx, "/bin/true", nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			waitFor(b, "every launched program reaped", func() bool { return len(s.b.launched.running()) == 0 })
		})
	}
}
