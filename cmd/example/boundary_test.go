package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/internal/ptytest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// boundaryToken is the daemon's token in these tests: a string that
// appears nowhere else, so finding it is a leak.
const boundaryToken = "b0undary-s3cret-7f3a"

// sti types s into tty as the test (root, so CAP_SYS_ADMIN lets it type
// into a terminal that is not its own): the check that ptytest.Queued sees
// what TIOCSTI types, then the input is flushed.
func sti(t *testing.T, tty *os.File, s string) {
	t.Helper()
	if err := ptytest.Type(tty.Fd(), s); err != nil {
		citest.Skip(t, "TIOCSTI refused to the test itself (%v): the kernel forbids it (dev.tty.legacy_tiocsti=0), nothing to test", err)
	}
}

// tiocsti is the attack an agent command makes: type a line into its
// standard input, its controlling terminal, and the daemon's terminal by
// name (a terminal's number is world-readable in /proc/PID/stat).
const tiocsti = `
my $line = "echo pwned\n";
sub sti { my ($fh, $what) = @_; my $ok = 1;
  for my $c (split //, $line) { $ok = 0 unless ioctl($fh, 0x5412, $c) }
  print "$what: ", ($ok ? "TYPED" : "refused: $!"), "\n" }
sti(*STDIN, "stdin");
if (open(my $t, "+<", "/dev/tty")) { sti($t, "/dev/tty") } else { print "/dev/tty: $!\n" }
if (open(my $p, "+<", $ARGV[0])) { sti($p, $ARGV[0]) } else { print "$ARGV[0]: $!\n" }
`

// reach is what an agent command tries on each process it is given: a
// signal, its environment and memory, and its command line (readable by
// every user on Linux: printed, to be checked for the token).
const reach = `
for my $p (@ARGV) {
  print "$p signal: ", (kill(0, $p) ? "ALLOWED" : "$!"), "\n";
  for my $f ("environ", "mem") { print "$p $f: ", (open(my $h, "<", "/proc/$p/$f") ? "ALLOWED" : "$!"), "\n" }
  if (open(my $h, "<", "/proc/$p/cmdline")) { local $/; my $c = <$h>; $c =~ tr/\0/ /; print "$p cmdline: $c\n" }
  else { print "$p cmdline: $!\n" }
}
`

// TestAgentBoundary runs the daemon as root under a terminal of its own,
// with a plugin, a token file and -agent-user, and tries as a hostile agent
// would, through allowed commands: to change the plugins, read the token,
// signal the daemon and its plugins or read their /proc, and type into the
// daemon's terminal (TIOCSTI). Every attempt fails, and the commands run
// as the agent's user.
func TestAgentBoundary(t *testing.T) {
	u := agentusertest.Need(t)
	citest.NeedPrograms(t, "perl")
	// A folder the agent may look into, as /etc/shinken would be.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	bin := build(t, dir, ".", "example")
	plugins := filepath.Join(dir, "plugins")
	pdir := filepath.Join(plugins, "policy")
	os.MkdirAll(pdir, 0o755)
	guard := build(t, pdir, "./testdata/policy", "policy")
	manifest, _ := os.ReadFile("testdata/policy/plugin.json")
	os.WriteFile(filepath.Join(pdir, "plugin.json"), manifest, 0o644)
	guardSum := fileSum(t, guard)
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte(boundaryToken+"\n"), 0o600)

	_, tty := ptytest.Open(t)
	sti(t, tty, "x\n")
	if n := ptytest.Queued(t, tty); n == 0 {
		t.Fatal("TIOCSTI as root typed nothing the check can see")
	}
	unix.IoctlSetInt(int(tty.Fd()), unix.TCFLSH, unix.TCIFLUSH)

	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token-file", token, "-plugins", plugins, "-project", "demo", "-no-guard",
		"-agent-user", u.Name, "-require-agent-user")
	cmd.Env = append(os.Environ(), "SHINKEN_TOKEN="+boundaryToken)
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	d := startCmd(t, cmd)
	d.awaitReady(t, 200, 2*time.Minute)
	if ctty := ttyOf(t, cmd.Process.Pid); ctty == 0 {
		t.Fatal("the daemon holds no terminal: the TIOCSTI check would test nothing")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	proxy := schematest.NewProxy(t, strings.TrimSuffix(d.aci, "/aci"))
	c, err := client.Dial(ctx, proxy.URL+"/aci", &client.DialOptions{Token: boundaryToken})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run := func(req *aci.ExecRequest) *aci.ExecResult {
		t.Helper()
		res, err := c.Exec(ctx, req)
		if err != nil {
			t.Fatalf("exec %+v: %v", req, err)
		}
		return res
	}

	if got := run(&aci.ExecRequest{Shell: "id -u; id -g"}).Stdout; got != fmt.Sprintf("%d\n%d\n", u.UID, u.GID) {
		t.Errorf("id -u; id -g: %q; want the agent's %d, %d", got, u.UID, u.GID)
	}
	if env := run(&aci.ExecRequest{Argv: []string{"env"}}).Stdout; strings.Contains(env, boundaryToken) || !strings.Contains(env, "HOME="+u.Home+"\n") {
		t.Errorf("the agent's environment holds the token, or not its HOME:\n%s", env)
	}

	// The guard swap: every step is an allowed command, and each fails.
	for _, line := range []string{
		"cp /bin/true " + guard,
		"mv -f " + guard + " " + guard + ".old",
		"cp /bin/true " + guard + ".new",
		"touch " + filepath.Join(plugins, "evil"),
		"mkdir " + filepath.Join(plugins, "evil"),
		"cat " + token,
		"ln -s /bin/true " + filepath.Join(pdir, "link"),
	} {
		res := run(&aci.ExecRequest{Shell: line})
		if res.ExitCode == nil || *res.ExitCode == 0 || !strings.Contains(res.Stderr, "ermission denied") {
			t.Errorf("%s: exit %v, %q: want a permission error", line, res.ExitCode, res.Stderr)
		}
	}
	if fileSum(t, guard) != guardSum {
		t.Error("the guard's program changed")
	}
	if ents, _ := os.ReadDir(pdir); len(ents) != 3 { // plugin.json, policy, facts.log
		t.Errorf("the plugin's folder holds %d entries, want 3", len(ents))
	}

	// The daemon and every process of its own (plugins, their engines):
	// no signal, no environ, no mem, no token on a command line.
	var pids []string
	for _, pid := range append([]int{cmd.Process.Pid}, descendants(t, cmd.Process.Pid)...) {
		if owner(pid) != u.UID {
			pids = append(pids, strconv.Itoa(pid))
		}
	}
	if len(pids) < 2 {
		t.Fatalf("processes %v: want the daemon and its plugin", pids)
	}
	out := run(&aci.ExecRequest{Argv: append([]string{"perl", "-e", reach}, pids...)}).Stdout
	for line := range strings.Lines(out) {
		what, result, _ := strings.Cut(strings.TrimSpace(line), ": ")
		switch {
		case strings.HasSuffix(what, "cmdline"):
			if strings.Contains(result, boundaryToken) {
				t.Errorf("%s holds the token: %s", what, result)
			}
		case strings.HasSuffix(what, "signal"):
			// Inside its pid namespace an agent's command cannot even
			// name the daemon or a plugin: ESRCH holds as well.
			if result != "Operation not permitted" && result != "No such process" {
				t.Errorf("%s: %s, want EPERM or ESRCH", what, result)
			}
		case result != "Permission denied":
			t.Errorf("%s: %s, want EACCES", what, result)
		}
	}
	if n := strings.Count(out, "\n"); n != 4*len(pids) {
		t.Errorf("%d lines for %d processes:\n%s", n, len(pids), out)
	}

	// TIOCSTI: nothing typed into the daemon's terminal.
	res := run(&aci.ExecRequest{Argv: []string{"perl", "-e", tiocsti, tty.Name()}})
	if strings.Contains(res.Stdout, "TYPED") || ptytest.Queued(t, tty) != 0 {
		t.Errorf("an agent command typed into the daemon's terminal:\n%s", res.Stdout)
	}
	t.Logf("TIOCSTI as the agent:\n%s", res.Stdout)
	d.stop(t)
}

// TestAgentUserCannotSwitch runs the daemon as an unprivileged user with
// -agent-user: it cannot switch, says so at start, and with
// -require-agent-user /readyz is not ready and says why.
func TestAgentUserCannotSwitch(t *testing.T) {
	u := agentusertest.Need(t)
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	bin := build(t, dir, ".", "example")
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-token", "tok", "-agent-user", "nobody", "-require-agent-user")
	cmd.Dir = u.Home
	cmd.Env = u.Env(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.Credential()}
	d := startCmd(t, cmd)
	if reason := d.awaitReady(t, 503, time.Minute); !strings.Contains(reason, "the agent user is not switched to") {
		t.Errorf("/readyz: %q", reason)
	}
	d.stop(t)
	if !strings.Contains(d.stderr.String(), "CANNOT RUN THE AGENT'S COMMANDS AS THEIR OWN USER") || !strings.Contains(d.stderr.String(), "lacks CAP_SETUID") {
		t.Errorf("the daemon did not say it cannot switch:\n%s", d.stderr)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// ttyOf is the controlling terminal (tty_nr) of pid.
func ttyOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := bytes.Cut(b, []byte(") "))
	f := strings.Fields(string(rest))
	n, _ := strconv.Atoi(f[4])
	return n
}

func descendants(t *testing.T, pid int) []int {
	t.Helper()
	ds, err := procfs.Descendants(pid)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// owner is the uid a process runs as (its /proc folder's owner).
func owner(pid int) uint32 {
	fi, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		return ^uint32(0)
	}
	return fi.Sys().(*syscall.Stat_t).Uid
}

// TestTokenScrubbed: a token given with -token or $SHINKEN_TOKEN still
// opens sessions, and is gone from what /proc shows of the daemon: its
// command line (readable by every user) and its start-up environment.
func TestTokenScrubbed(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, ".", "example")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"flag", []string{"-token", boundaryToken}, nil},
		{"flag=", []string{"-token=" + boundaryToken}, nil},
		{"environment", nil, []string{"SHINKEN_TOKEN=" + boundaryToken}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0"}, tc.args...)...)
			cmd.Env = append(os.Environ(), tc.env...)
			d := startCmd(t, cmd)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := client.Dial(ctx, schematest.ProxyURL(t, strings.TrimSuffix(d.aci, "/aci"))+"/aci", &client.DialOptions{Token: boundaryToken})
			if err != nil {
				t.Fatalf("the token no longer opens a session: %v", err)
			}
			c.Close()
			for _, f := range []string{"cmdline", "environ"} {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", cmd.Process.Pid, f))
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(b, []byte(boundaryToken)) {
					t.Errorf("/proc/PID/%s holds the token: %q", f, b)
				}
			}
			d.stop(t)
		})
	}
}
