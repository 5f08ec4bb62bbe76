package escouade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"shinken.dev/go/escouade"
	"shinken.dev/go/internal/agentuser"
	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/ptytest"
)

// typedLine is what the hostile plugin types: a command line a shell
// reading the terminal would run once the Host is gone.
const typedLine = "echo typed-by-a-plugin\n"

// TestHostileTerminal: a command plugin tries to type into its Host's
// controlling terminal (TIOCSTI), as one did in issue 39 (the user's shell
// ran what it typed once the daemon had exited): into /dev/tty, into the
// Host's terminal opened by its name, and on its inherited descriptors.
// Every program the Host starts is in a session of its own, so none holds
// that terminal, and every attempt fails: nothing reaches the terminal.
//
// The Host runs in a process of its own whose controlling terminal is
// the slave of a pseudo-terminal this test opened, under each containment
// (a cgroup, a shepherd, the process group alone, the fixed init of a
// program without EngineMain), as root and as an unprivileged user. A
// root plugin holds CAP_SYS_ADMIN, with which TIOCSTI types into any
// terminal it opens, its own or not: as root the attempt by name is left
// out (only another user for the plugins would stop it); the user's
// terminal, which is theirs, is the unprivileged plugin's to open.
func TestHostileTerminal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// As root, the Host is run as root and as another user; otherwise as
	// this process's user alone.
	users := []hostUser{{"unprivileged", nil, exe}}
	if os.Getuid() == 0 {
		users = []hostUser{{"root", nil, exe}, {"unprivileged", agentusertest.Need(t), copyForUser(t, exe)}}
	}
	for _, who := range users {
		for _, mode := range []string{"auto", "shepherd", "group", "fixed-init"} {
			t.Run(who.name+"/"+mode, func(t *testing.T) { hostileTerminal(t, who, mode) })
		}
	}
}

// A hostUser is who a Host of TestHostileTerminal runs as, and the test
// binary it runs.
type hostUser struct {
	name string
	u    *agentuser.User // nil: this process's user
	exe  string
}

func hostileTerminal(t *testing.T, who hostUser, mode string) {
	exe, u, root := who.exe, who.u, who.u == nil && os.Getuid() == 0
	_, tty := ptytest.Open(t)
	ptytest.Raw(t, tty)
	byName := tty.Name()
	var cred *syscall.Credential
	env := os.Environ()
	if u != nil {
		// A terminal belongs to the user logged in on it (login chowns it).
		if err := tty.Chown(int(u.UID), int(u.GID)); err != nil {
			t.Fatal(err)
		}
		cred, env = u.Credential(), u.Env(env)
	}
	if root {
		byName = "-"
	}
	dir := t.TempDir()
	openToAll(dir)
	report := filepath.Join(dir, "report")
	if u != nil {
		if err := os.Chown(dir, int(u.UID), int(u.GID)); err != nil {
			t.Fatal(err)
		}
	}
	argv, _ := json.Marshal([]string{exe, pluginArg, "tty-typer", report, byName})
	pdir := filepath.Join(dir, "typer")
	os.Mkdir(pdir, 0o755)
	m := fmt.Sprintf(`{"id":"typer","version":"1.0.0","protocolVersion":1,"run":{"command":%s}}`, argv)
	if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}

	// A guard against a hang: the Host's process takes a second or so.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host := exec.CommandContext(ctx, exe, pluginArg, "tty-host", mode, pdir)
	var out, stderr bytes.Buffer
	host.Stdin, host.Stdout, host.Stderr = tty, &out, &stderr
	host.Dir, host.Env = "/", env
	host.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: cred}
	// A mode falls back where what it names cannot be made (no cgroup
	// v2 here): the Host's process says what held the plugin, so that each
	// case is known to be the one it names.
	wantHolder := map[string]string{"auto": "cgroup", "shepherd": "shepherd", "group": "", "fixed-init": "cgroup"}[mode]
	switch {
	case wantHolder != "cgroup":
	case escouade.CgroupParent() == "" && mode == "auto":
		wantHolder = "shepherd"
	case escouade.CgroupParent() == "":
		wantHolder = "" // the fixed init, with no shepherd and no cgroup
	case u != nil:
		// The unprivileged Host makes its cgroups in one delegated to its
		// user, as systemd delegates a user's.
		host.SysProcAttr.UseCgroupFD, host.SysProcAttr.CgroupFD = true, delegatedCgroup(t, u)
	}
	err := host.Run()
	said := map[string]string{}
	for line := range strings.Lines(out.String()) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		said[k] = v
	}
	if err != nil {
		t.Fatalf("the Host's process: %v\nsaid:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	t.Logf("the Host's process said:\n%s", out.String())

	// The check checks something: the Host held the terminal, and TIOCSTI
	// typed into it from there.
	var st unix.Stat_t
	if err := unix.Fstat(int(tty.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if said["terminal"] != strconv.FormatUint(st.Rdev, 10) {
		t.Fatalf("the Host's controlling terminal is %q, not the test's (%d)", said["terminal"], st.Rdev)
	}
	switch self := said["self"]; {
	case self == "typed 1":
	case strings.Contains(self, syscall.EIO.Error()) && ptytest.Forbidden():
		citest.Skip(t, "TIOCSTI refused to the Host on its own terminal (%s): the kernel forbids it (dev.tty.legacy_tiocsti=0) to all but CAP_SYS_ADMIN, nothing to test", self)
	default:
		t.Fatalf("TIOCSTI by the Host on its own terminal: %q, want a byte typed: the test would test nothing", self)
	}
	if said["flushed"] != "0" {
		t.Fatalf("the Host's own byte is still in the terminal after a flush: %q", said["flushed"])
	}
	// Modes name programs that fall back (no cgroup v2 here): what holds
	// the plugin is said, so that each case is known to be what it names.
	if said["holder"] != strconv.Quote(wantHolder) {
		t.Errorf("the plugin was held by %s, want %q", said["holder"], wantHolder)
	}

	// The plugin's attempts, one a line: each failed.
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the plugin made no report: %v", err)
	}
	t.Logf("the plugin said:\n%s", b)
	attempts := map[string]string{}
	for line := range strings.Lines(string(b)) {
		what, result, _ := strings.Cut(strings.TrimSpace(line), ": ")
		attempts[what] = result
		if !strings.HasPrefix(result, "refused ") {
			t.Errorf("the plugin on %s: %s", what, result)
		}
	}
	// Each failed for the reason the boundary gives: no controlling
	// terminal to open, a terminal that is not its own, pipes.
	want := map[string]string{
		"/dev/tty": "refused open (" + syscall.ENXIO.Error() + ")",
		"fd 0":     "refused TIOCSTI (" + syscall.ENOTTY.Error() + ")",
		"fd 1":     "refused TIOCSTI (" + syscall.ENOTTY.Error() + ")",
		"fd 2":     "refused TIOCSTI (" + syscall.ENOTTY.Error() + ")",
	}
	if !root {
		want[byName] = "refused TIOCSTI (" + syscall.EPERM.Error() + ")"
	}
	for what, result := range want {
		if attempts[what] != result {
			t.Errorf("the plugin on %s: %q, want %q", what, attempts[what], result)
		}
	}
	if n := ptytest.Queued(t, tty); n != 0 {
		buf := make([]byte, n)
		tty.Read(buf)
		t.Errorf("%d bytes reached the Host's terminal: %q", n, buf)
	}
	// The plugin ended with its Host.
	waitFor(t, "the plugin's processes reaped", func() bool { return len(processesWith("tty-typer")) == 0 })
}

// copyForUser copies the test binary where u may run it: the plugins of
// an unprivileged Host run it too.
func copyForUser(t *testing.T, exe string) string {
	t.Helper()
	dir := t.TempDir()
	openToAll(dir)
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "escouade.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// openToAll lets every user read and enter dir and the folders above it,
// up to the temporary folder.
func openToAll(dir string) {
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
}

// delegatedCgroup makes a cgroup below the test's, delegated to u (its
// folder and the files that move processes are u's), and returns its
// folder's descriptor, to start a process into; it is removed at the
// test's end, once the Host removed its own.
func delegatedCgroup(t *testing.T, u *agentuser.User) int {
	t.Helper()
	dir := filepath.Join(escouade.CgroupParent(), "tty-test-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Empty once the Host's process ended, if the Host removed the
		// cgroups it made there.
		if err := os.Remove(dir); err != nil {
			t.Errorf("the delegated cgroup: %v", err)
		}
	})
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(dir, f), int(u.UID), int(u.GID)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return int(f.Fd())
}

// processesWith lists the live processes whose command line holds arg.
func processesWith(arg string) []int {
	var pids []int
	all, _ := procfs.PIDs()
	for _, pid := range all {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && bytes.Contains(b, []byte("\x00"+arg+"\x00")) && procfs.Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// runTerminalHelper is main for the processes of TestHostileTerminal:
// "tty-host" is the Host, "tty-typer" its plugin.
func runTerminalHelper(ctx context.Context, in io.Reader, out io.Writer, mode string, args []string) int {
	switch mode {
	case "tty-host":
		return terminalHost(ctx, args[0], args[1])
	case "tty-typer":
		// tty-typer <report> <the Host's terminal, or ->: tries to type
		// into /dev/tty, the Host's terminal by its name, and on every
		// descriptor it holds, and says how each went.
		var said strings.Builder
		try := func(what string, fd int, err error) {
			if err != nil {
				fmt.Fprintf(&said, "%s: refused open (%v)\n", what, errors.Unwrap(err))
			} else if err = ptytest.Type(uintptr(fd), typedLine); err != nil {
				fmt.Fprintf(&said, "%s: refused TIOCSTI (%v)\n", what, err)
			} else {
				fmt.Fprintf(&said, "%s: TYPED\n", what)
			}
		}
		open := func(path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				try(path, -1, err)
				return
			}
			defer f.Close()
			try(path, int(f.Fd()), nil)
		}
		open("/dev/tty")
		if args[1] != "-" {
			open(args[1])
		}
		// Every descriptor it holds, inherited or not: by number, as a
		// file would close it once collected.
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, e := range fds {
			fd, _ := strconv.Atoi(e.Name())
			try("fd "+e.Name(), fd, nil)
		}
		os.WriteFile(args[0]+".tmp", []byte(said.String()), 0o600)
		os.Rename(args[0]+".tmp", args[0])
		return serve(ctx, in, out, meekHandlers)
	}
	return 2
}

// terminalHost is the Host of TestHostileTerminal, in a process whose
// controlling terminal is its standard input: it says which terminal it
// holds, whether TIOCSTI types there for itself, and what holds its
// plugin, then runs the plugin in dir until it answered initialize (it
// made its attempts before) and closes.
func terminalHost(ctx context.Context, mode, dir string) int {
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		_, rest, _ := bytes.Cut(b, []byte(") "))
		if f := strings.Fields(string(rest)); len(f) > 4 {
			fmt.Printf("terminal: %s\n", f[4]) // tty_nr
		}
	}
	if err := ptytest.Type(0, "x"); err != nil {
		fmt.Printf("self: refused %v\n", err)
		return 0
	}
	n, _ := unix.IoctlGetInt(0, unix.TIOCINQ)
	fmt.Printf("self: typed %d\n", n)
	unix.IoctlSetInt(0, unix.TCFLSH, unix.TCIFLUSH)
	n, _ = unix.IoctlGetInt(0, unix.TIOCINQ)
	fmt.Printf("flushed: %d\n", n)
	if mode == "fixed-init" {
		escouade.SetShepherds(false)
		mode = "auto"
	}
	escouade.SetContainment(mode)
	fmt.Printf("holder: %q\n", escouade.Containment())
	h := escouade.New(&escouade.Options{Secrets: escouade.SecretMap{}, Journal: slog.DiscardHandler, Languages: languages, StopGrace: time.Second})
	_, err := h.Start(ctx, dir)
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cerr := h.Close(cctx); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Printf("error: %v\n", err)
		return 5
	}
	return 0
}
