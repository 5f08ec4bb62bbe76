package osexec_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/citest"
	"shinken.dev/go/internal/procfs"
	"shinken.dev/go/shinken/aci"
)

// escapeLine starts a job that leaves its command's process group and
// session and is orphaned (a double fork under setsid), prints the job's
// pid as the runtime's /proc names it, and keeps running.
const escapeLine = `(setsid sh -c 'read -r p _ </proc/self/stat; echo $p; exec sleep 1000' &) ; exec sleep 1000`

// escapeHelper is runtimeHelperEnv's value for runtimeEscapeHelper.
const escapeHelper = "escape"

// runtimeEscapeHelper plays a runtime whose command starts an escaping
// job: it prints the job's pid, then waits to be killed.
func runtimeEscapeHelper() {
	p, err := osexec.New(nil).Start(context.Background(), aci.ExecRequest{Shell: escapeLine})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	c, err := p.Next()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Stdout.Write(c.Data)
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// escapee reads the escaped job's pid from r.
func escapee(t *testing.T, r io.Reader) int {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	pid, aerr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || aerr != nil {
		t.Fatalf("the job's pid: %q, %v, %v", line, err, aerr)
	}
	if !procfs.Alive(pid) {
		t.Fatalf("the job %d is not running", pid)
	}
	return pid
}

// TestEscapeesDie: a job that double-forks and calls setsid, which a
// process group does not hold, dies with its command when the command is
// killed, and when the runtime is killed outright (SIGKILL): its command
// runs in a pid namespace of its own, below an init the runtime's death
// kills.
func TestEscapeesDie(t *testing.T) {
	if !osexec.New(nil).Contained() {
		citest.Skip(t, "the kernel makes no pid namespace here")
	}
	t.Run("kill", func(t *testing.T) {
		e := osexec.New(nil)
		p := start(t, e, aci.ExecRequest{Shell: escapeLine})
		c, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		job := escapee(t, strings.NewReader(string(c.Data)))
		if !e.Contained() {
			t.Fatal("the Executor says it did not contain the command")
		}
		p.Kill()
		p.Wait()
		waitFor(t, time.Minute, "the escaped job to die", func() bool { return !procfs.Alive(job) })
	})
	t.Run("runtime SIGKILL", func(t *testing.T) {
		helper := exec.Command(os.Args[0])
		helper.Env = append(os.Environ(), runtimeHelperEnv+"="+escapeHelper)
		stdin, err := helper.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		stdout, err := helper.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		job := escapee(t, stdout)
		t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })
		helper.Process.Kill()
		helper.Wait()
		waitFor(t, time.Minute, "the escaped job to die", func() bool { return !procfs.Alive(job) })
	})
}

// TestSignalsKept: a contained command ignores no signal its init's
// shell would have made it ignore (an asynchronous command ignores
// SIGINT and SIGQUIT), so a terminal's ctrl-c still reaches it.
func TestSignalsKept(t *testing.T) {
	out := run(t, osexec.New(nil), argv("grep", "^SigIgn:", "/proc/self/status"))
	if got := strings.Fields(string(out.Stdout)); len(got) != 2 || strings.Trim(got[1], "0") != "" {
		t.Errorf("ignored signals: %q, want none", out.Stdout)
	}
}
