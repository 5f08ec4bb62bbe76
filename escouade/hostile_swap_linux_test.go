package escouade_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"shinken.dev/go/escouade"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
)

// TestHostileGuardSwap is the agent's swap of its guard (issue 39): with
// only cp, mv -f and kill -9, an agent that may write the plugin's folder
// renames its own program over the guard's and kills the guard. The Host
// restarts the file it started first, held since, and says that the path
// names another file now. Then the agent writes into that held file
// itself, through the running guard's /proc/<pid>/fd/3: the restart is
// refused, the journal says why, and the plugin is disabled. Neither
// program of the agent ever runs. Held by a cgroup (auto) and by a
// shepherd.
func TestHostileGuardSwap(t *testing.T) {
	for _, mode := range []string{"auto", "shepherd"} {
		t.Run(mode, func(t *testing.T) {
			defer escouade.SetContainment(mode)()
			guardSwap(t)
		})
	}
}

func guardSwap(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marks := filepath.Join(t.TempDir(), "marks")
	script := func(mark string) string {
		return "#!/bin/sh\nexec '" + exe + "' " + pluginArg + "=" + testTemp + " marked '" + marks + "' " + mark + "\n"
	}
	dir := writePlugin(t, "guard", `"run":{"command":["./guard"]}`, map[string]string{"guard": script("guard")})
	guard := filepath.Join(dir, "guard")
	if err := os.Chmod(guard, 0o755); err != nil {
		t.Fatal(err)
	}
	h, j := newHost(t, &escouade.Options{CrashBudget: 5})
	p, err := h.Start(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// started waits for the n-th start and returns the guard's reference
	// (pidRef), failing on any mark but the guard's.
	started := func(n int) string {
		t.Helper()
		var lines []string
		waitFor(t, "start "+strconv.Itoa(n)+" of the guard", func() bool {
			b, _ := os.ReadFile(marks)
			lines = strings.Split(strings.TrimSpace(string(b)), "\n")
			return len(b) > 0 && len(lines) >= n
		})
		for _, l := range lines {
			if !strings.HasPrefix(l, "guard ") {
				t.Fatalf("the agent's program ran: %q", lines)
			}
		}
		return strings.TrimPrefix(lines[n-1], "guard ")
	}
	// live returns the pid of the running guard that ref names.
	live := func(ref string) int {
		t.Helper()
		pid := hostPID(ref)
		if pid <= 0 {
			t.Fatalf("the guard %s is not running", ref)
		}
		return pid
	}
	pid := live(started(1))

	// cp attacker guard.new; mv -f guard.new guard; kill -9 <guard>.
	if err := os.WriteFile(guard+".new", []byte(script("swapped")), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(guard+".new", guard); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	j.wait(t, "guard", "replaced on disk")
	j.wait(t, "guard", "plugin restarted")
	pid = live(started(2))

	// The held file, written in place through the guard's descriptor.
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/fd/3", os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatalf("the guard holds no program file as its descriptor 3: %v", err)
	}
	if _, err := f.WriteString(script("written")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	syscall.Kill(pid, syscall.SIGKILL)
	e := j.wait(t, "guard", "plugin disabled: its program changed")
	if !strings.Contains(e.attrs["error"], "written in place") {
		t.Errorf("the journal says %v", e)
	}
	waitFor(t, "the guard disabled", func() bool { return p.State() == escouade.StateDisabled })
	started(2) // and no third start, of anything
}

// TestHostileDeserter: a command plugin clears its own parent-death
// signal and moves itself out of its cgroup, then its Host is killed
// outright. It still ends: the Host's shepherd, above every program that
// may start others (a cgroup or not), holds the parent-death signal and
// the lifeline, and no program can clear them (issue 39: the plugin, the
// init of its namespace, outlived its Host). Without EngineMain
// (fixed-init), a fixed init of the Host's holds them instead. The
// plugin's pid is found from the Host's side: in a /proc of its own, the
// plugin knows only its namespace's.
func TestHostileDeserter(t *testing.T) {
	for _, mode := range []string{"auto", "shepherd", "fixed-init"} {
		t.Run(mode, func(t *testing.T) {
			readyFile := filepath.Join(t.TempDir(), "ready")
			dir := writePlugin(t, "deserter", commandManifest("deserter", readyFile), nil)
			exe, _ := os.Executable()
			host := exec.Command(exe, pluginArg, "host-contained", mode, dir)
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			pidIn(t, readyFile) // it deserted
			var pid int
			for _, p := range processesBelow(host.Process.Pid) {
				if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); bytes.Contains(b, []byte("\x00deserter\x00")) {
					pid = p
				}
			}
			if pid == 0 {
				host.Process.Kill()
				host.Wait()
				t.Fatal("the deserter is not below its Host")
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
			if !procfs.Alive(pid) || !strings.Contains(string(b), "NSpid") {
				t.Fatalf("the plugin %d is not running", pid)
			}
			host.Process.Signal(syscall.SIGKILL)
			host.Wait()
			waitFor(t, "the deserter ends with its Host", func() bool { return !procfs.Alive(pid) })
		})
	}
}

// desert clears the calling process's parent-death signal and moves it
// out of its cgroup into its parent's; false when the first fails.
func desert() bool {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, 0, 0); e != 0 {
		return false
	}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "0::"); ok {
			os.WriteFile(filepath.Join("/sys/fs/cgroup", filepath.Dir(rest), "cgroup.procs"), []byte("0"), 0)
		}
	}
	return true
}

// TestHostileHostProc: a command plugin, run as the Host's user, tries to
// read its Host's environ, cmdline and mem in /proc (issue 39: a token in
// the environment or the command line was one read away). In a /proc of
// its own, the Host's pid names nothing; with the machine's (the private
// mounts off), the same plugin reads them, as it did before.
func TestHostileHostProc(t *testing.T) {
	if !escouade.PIDNamespaces() {
		citest.Skip(t, "no pid namespaces here: the plugin has the machine's /proc")
	}
	for _, private := range []bool{true, false} {
		t.Run(fmt.Sprintf("private=%v", private), func(t *testing.T) {
			defer escouade.SetPrivateMounts(private)()
			v := newValidator(t)
			h, _ := newHost(t, nil)
			said := filepath.Join(t.TempDir(), "said")
			p := startCommand(t, h, v, "proc-reader", "", "proc-reader", strconv.Itoa(os.Getpid()), "environ,cmdline,mem", said)
			defer p.Stop(context.Background())
			var b []byte
			waitFor(t, "the plugin's reads", func() bool {
				b, _ = os.ReadFile(said)
				return len(b) > 0
			})
			got := string(b)
			want := "environ refused\ncmdline refused\nmem refused\n"
			if !private {
				want = "environ readable\ncmdline readable\nmem readable\n"
			}
			if got != want {
				t.Errorf("the plugin said %q, want %q", got, want)
			}
		})
	}
}
