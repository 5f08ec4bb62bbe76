package escouade_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runNamespaceHelper is main for the test plugins, and what they start,
// that try to leave what holds them: a pid namespace, a cgroup, a
// shepherd. It returns 2 for a mode it does not know.
func runNamespaceHelper(ctx context.Context, in io.Reader, out io.Writer, mode string, args []string) int {
	self := os.Args[0]
	switch mode {
	case "orphan-escape":
		// A child whose own line leaves the plugin's cgroup for the one
		// whose cgroup.procs is args[0] (the Host's), then double-forks
		// with setsid, so that no parentage names the last one, which
		// writes its pid to args[1].
		child := exec.Command(self, pluginArg, "orphan-escape-1", args[0], args[1])
		if err := child.Start(); err != nil {
			return 3
		}
		go child.Wait()
		return serve(ctx, in, out, meekHandlers)
	case "orphan-escape-1":
		signal.Ignore(syscall.SIGTERM)
		// cgroup.procs reads a pid in the writer's pid namespace.
		if os.WriteFile(args[0], []byte(strconv.Itoa(os.Getpid())), 0) != nil {
			return 3
		}
		return startAndLeave(exec.Command(self, pluginArg, "orphan-escape-2", args[1]))
	case "orphan-escape-2":
		signal.Ignore(syscall.SIGTERM)
		return startAndLeave(exec.Command(self, pluginArg, "orphan-escape-3", args[0]))
	case "orphan-escape-3":
		signal.Ignore(syscall.SIGTERM)
		os.WriteFile(args[0], []byte(pidRef(os.Getpid())), 0o600)
		select {}

	case "regicide":
		// A child that tries to kill the init of the plugin's pid
		// namespace (the plugin, or its shepherd), then starts a setsid
		// grandchild, and reports to args[0].
		child := exec.Command(self, pluginArg, "regicide-child", args[0])
		if err := child.Start(); err != nil {
			return 3
		}
		go child.Wait()
		return serve(ctx, in, out, meekHandlers)
	case "regicide-child":
		signal.Ignore(syscall.SIGTERM)
		init := procPID(1) // the namespace's init, as its /proc numbers it
		var r report
		r.try("kill -9 1", syscall.Kill(1, syscall.SIGKILL))
		r.try("kill -9 of the init as /proc numbers it", syscall.Kill(init, syscall.SIGKILL))
		if fd, err := unix.Open("/proc/"+strconv.Itoa(init), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			r.try("open /proc/<init> as a pidfd", err)
		} else {
			r.try("pidfd_send_signal SIGKILL to /proc/<init>", unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0))
			unix.Close(fd)
		}
		gc := exec.Command(self, pluginArg, "sleeper")
		gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := gc.Start(); err != nil {
			return 3
		}
		r.say("init", pidRef(1))
		r.say("grandchild", pidRef(gc.Process.Pid))
		r.say("self", pidRef(os.Getpid()))
		if r.write(args[0]) != nil {
			return 3
		}
		select {}

	case "ns-siblings":
		// Tries the ways out of a pid namespace, from a child, and
		// reports to args[0]; args[1] is the Host's pid, as /proc numbers
		// it; args[2] and args[3] are where the sleepers started in a
		// nested namespace and through nsenter write their pids.
		child := exec.Command(self, append([]string{pluginArg, "ns-siblings-child"}, args...)...)
		if err := child.Start(); err != nil {
			return 3
		}
		go child.Wait()
		return serve(ctx, in, out, meekHandlers)
	case "ns-siblings-child":
		signal.Ignore(syscall.SIGTERM)
		host, _ := strconv.Atoi(args[1])
		var r report
		// A namespace of its own, below: still in the plugin's.
		nested := exec.Command("unshare", "--pid", "--fork", "--", self, pluginArg, "ns-sleeper", args[2])
		nested.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		r.try("unshare --pid --fork", nested.Start())
		// The Host's namespace, by its /proc/<pid>/ns/pid.
		if fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/pid", host), unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			r.try("open the Host's ns/pid", err)
		} else {
			r.try("setns to the Host's pid namespace", unix.Setns(fd, unix.CLONE_NEWPID))
			unix.Close(fd)
		}
		enter := exec.Command("nsenter", "-t", args[1], "-p", "--", self, pluginArg, "ns-sleeper", args[3])
		r.try("nsenter -t <host> -p", enter.Run())
		// The Host itself, by the number /proc gives it.
		r.try("ptrace attach to the Host", unix.PtraceAttach(host))
		r.try("kill -0 of the Host", syscall.Kill(host, 0))
		if fd, err := unix.Open("/proc/"+args[1], unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			r.try("open /proc/<host> as a pidfd", err)
		} else {
			r.try("pidfd_send_signal 0 to the Host", unix.PidfdSendSignal(fd, 0, nil, 0))
			unix.Close(fd)
		}
		r.say("self", pidRef(os.Getpid()))
		if r.write(args[0]) != nil {
			return 3
		}
		select {}
	case "ns-sleeper":
		signal.Ignore(syscall.SIGTERM)
		os.WriteFile(args[0], []byte(pidRef(os.Getpid())), 0o600)
		select {}
	}
	return 2
}

// startAndLeave starts cmd in a session of its own and exits, leaving it
// an orphan.
func startAndLeave(cmd *exec.Cmd) int {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 3
	}
	return 0
}

// A report is what a helper says it tried and saw, a line each:
// "what: ok" or "what: error", "name=<pidRef>".
type report struct{ lines []string }

func (r *report) try(what string, err error) {
	var errno syscall.Errno
	switch {
	case err == nil:
		r.lines = append(r.lines, what+": ok")
	case errors.As(err, &errno):
		r.lines = append(r.lines, what+": "+unix.ErrnoName(errno))
	default:
		r.lines = append(r.lines, what+": "+strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

// say reports a process, by a reference for the test (pidRef).
func (r *report) say(name, ref string) { r.lines = append(r.lines, name+"="+ref) }

// write writes the report whole: a reader sees all of it or none.
func (r *report) write(path string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(r.lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
