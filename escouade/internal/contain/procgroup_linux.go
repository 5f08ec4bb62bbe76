package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Containment says how the programs the Host starts hold their
// descendants: the tests choose each way on a machine where all work.
type containment int32

const (
	containAuto     containment = iota // a cgroup, else a shepherd, else the group alone
	containShepherd                    // a shepherd, never a cgroup
	containGroup                       // the process group alone
)

var containMode atomic.Int32

// Start starts cmd in a group of its own, with a parent-death signal,
// and waits for it on a goroutine locked to the thread that started it: the
// signal fires when that thread ends, so it lives as long as the child.
// Its descendants are held by a cgroup where one can be made, else, when
// the program mayFork (starts others: every program but an engine), by a
// shepherd, where the program links EngineMain; and a program that
// mayFork, or its shepherd, is the init of a pid namespace of its own
// where the Host may make one (pidns_linux.go).
func Start(cmd *exec.Cmd, mayFork bool) (*Group, error) {
	var cg *cgroup
	if containment(containMode.Load()) == containAuto {
		cg = newCgroup()
	}
	ns := mayFork && usePIDNamespace()
	mounts := ns && usePrivateMounts() && !mountNSRefused.Load()
	g, err := startContained(cmd, cg, ns, mounts, mayFork)
	if err != nil && mounts && namespaceRefused(err) && !namespaceQuota(err) && !pidnsMade.Load() {
		// The kernel refuses a mount or cgroup namespace at the first
		// start (none of the latter before Linux 4.6): try with the pid
		// namespace alone, and make no more if that works.
		first := err
		if g, err = startContained(copyCmd(cmd), cg, ns, false, mayFork); err == nil {
			mountNSRefused.Store(true)
			refusePrivateMounts(fmt.Errorf("the kernel refused a mount or cgroup namespace: %w", first))
		}
	}
	if err != nil && ns && namespaceRefused(err) {
		if full := namespaceQuota(err); full || pidnsMade.Load() {
			// Whether namespaces are made was decided at the first
			// start: a quota that another plugin holds (ENOSPC, EUSERS),
			// or a refusal after namespaces were made, fails this start
			// and turns nothing off.
			cg.remove()
			if full {
				return nil, fmt.Errorf("no pid namespace can be made now, the user's quota is used up (%w): the program does not start without one", err)
			}
			return nil, fmt.Errorf("the kernel refused a pid namespace after it made others (%w): the program does not start without one", err)
		}
		// The kernel refuses the namespace (a seccomp policy, a security
		// module): try without, and make no more if that works.
		first := err
		if g, err = startContained(copyCmd(cmd), cg, false, false, mayFork); err == nil {
			pidnsRefused.CompareAndSwap(nil, &first)
		}
	}
	if err == nil && g.ns {
		pidnsMade.Store(true)
	}
	if err != nil && cg != nil {
		// Perhaps a kernel without clone3 into a cgroup (before 5.7): try
		// without, with a copy (a Cmd starts once), and make no more
		// cgroups if that works.
		cg.remove()
		ns = ns && pidnsRefused.Load() == nil
		if g, err = startContained(copyCmd(cmd), nil, ns, ns && mounts && !mountNSRefused.Load(), mayFork); err == nil {
			noCgroups.Store(true)
			if g.ns {
				pidnsMade.Store(true)
			}
		}
	}
	return g, err
}

// copyCmd returns a copy of cmd that has not started: a Cmd starts once.
func copyCmd(cmd *exec.Cmd) *exec.Cmd {
	return &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
		Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles,
		SysProcAttr: cmd.SysProcAttr, WaitDelay: cmd.WaitDelay, Cancel: cmd.Cancel}
}

// startContained starts cmd in its own group, into cg, and, when the
// program mayFork, under a shepherd or a fixed init; the program, or the
// init above it, is the init of a pid namespace of its own when ns, and of
// mount and cgroup namespaces with their own /proc and cgroup hierarchy
// when mounts too (mounts_linux.go).
func startContained(cmd *exec.Cmd, cg *cgroup, ns, mounts, mayFork bool) (*Group, error) {
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	// A session of its own, so a group of its own whose id is its pid, and
	// no controlling terminal: the Host's cannot be typed into (TIOCSTI).
	// Setpgid goes with Setsid (setpgid after setsid is EPERM), and a
	// caller's Setctty or Foreground would hand a terminal back.
	attr.Setsid = true
	attr.Setpgid, attr.Pgid = false, 0
	attr.Setctty, attr.Foreground, attr.Noctty, attr.Ctty = false, false, false, 0
	attr.Pdeathsig = syscall.SIGKILL
	attr.UseCgroupFD, attr.CgroupFD = false, 0
	if cg != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, cg.fd
	}
	namespaceAttr(&attr, ns)
	cmd.SysProcAttr = &attr
	g := &Group{exited: make(chan struct{}), cg: cg, ns: ns}
	// A shepherd above every program that may start others, cgroup or
	// not: the Host's init, not dumpable, holds the lifeline and the
	// parent-death signal, which the program, were it the init, could
	// clear (prctl, setpriv --pdeathsig clear) before leaving its cgroup.
	// Without EngineMain, a fixed init does, less well (mounts_linux.go).
	switch {
	case mayFork && useShepherd():
		if mounts {
			mountsAttr(&attr)
		}
		sc, sh, err := shepherded(cmd, mounts)
		if err != nil {
			return nil, err
		}
		cmd, g.sh = sc, sh
	case mayFork && ns:
		var sealed *os.File
		if cmd, mounts, sealed = shInited(cmd, mounts); mounts {
			fixedInitMountsAttr(&attr)
		}
		if sealed != nil {
			defer sealed.Close() // the init holds it now, or never will
		}
	}
	started := make(chan error, 1)
	go g.run(cmd, started)
	err := <-started
	if g.sh != nil {
		g.sh.started(cmd)
		if err == nil {
			err = g.sh.boot()
			close(g.sh.booted)
			if err != nil {
				g.Signal(syscall.SIGKILL)
				<-g.exited // bounded: the shepherd is told to end, then killed
			}
		}
		if err != nil {
			g.sh.kill()
			g.sh.reply.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// useShepherd reports whether a program with no cgroup gets a shepherd:
// one can be started (the program called EngineMain) and the tests did not
// ask for the group alone.
func useShepherd() bool {
	return reexec.Load() && !shepherdsOff.Load() && containment(containMode.Load()) != containGroup
}

func (g *Group) run(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	g.pgid = cmd.Process.Pid
	started <- nil

	// Wait for the leader to end without reaping it: while it is a zombie
	// its pid still names its group, so the group can be killed, taking
	// with it what the program started, without hitting a stranger.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, g.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	g.mu.Lock()
	g.cg.killEscapees() // while their parents, in the group, still name them
	syscall.Kill(-g.pgid, syscall.SIGKILL)
	g.cg.kill() // and every descendant, wherever it went
	g.reaped = true
	g.mu.Unlock()
	g.cg.remove()
	err := cmd.Wait()
	end := endingOf(cmd.ProcessState, err)
	if g.sh != nil {
		<-g.sh.booted // the boot's read of the replies is over
		if said := g.sh.ended(); said != nil {
			end = said.ending() // the program's, not the shepherd's
		} else {
			// Something killed the shepherd before it could sweep: the
			// program or a descendant, which have the user's rights,
			// unless the shepherd is their namespace's init, which only
			// the Host (or the user, from outside) can kill, and whose
			// end took everything in the namespace with it.
			if g.ns {
				end = Ending{How: "its shepherd was killed (" + end.How + "), and with it all it held"}
			} else {
				end = Ending{How: "its shepherd was killed (" + end.How + "): what it started may outlive it"}
			}
		}
	}
	g.mu.Lock()
	g.end = end
	g.mu.Unlock()
	close(g.exited)
}

// signal sends sig to the whole group, unless its leader was reaped. A
// shepherd's SIGKILL is a request to it, to kill and sweep everything
// below it, and the group's kill only if it did not end within
// shepherdWait.
func (g *Group) Signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reaped {
		return
	}
	if sig == syscall.SIGKILL && g.sh != nil {
		g.sh.kill()
		syscall.Kill(g.pgid, syscall.SIGCONT) // a stopped shepherd sweeps too
		time.AfterFunc(shepherdWait, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if !g.reaped {
				syscall.Kill(-g.pgid, syscall.SIGKILL)
			}
		})
		return
	}
	if sig == syscall.SIGKILL {
		g.cg.killEscapees()
	}
	if g.sh != nil {
		g.sh.signal(sig) // the shepherd, busy on a loaded machine, hands it on later
	}
	syscall.Kill(-g.pgid, sig)
	if sig == syscall.SIGKILL {
		g.cg.kill()
	}
}
