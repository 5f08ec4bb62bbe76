package contain

import (
	"os"
	"sync"
)

// A group is a program started in a process group of its own, killed with
// the Host: the plugins' programs, the shared processes of launch.shared,
// and what each of them starts. When its leader ends, the rest of the
// group is killed: nothing it started outlives it.
//
// On Linux the program is also started into a cgroup of its own when one
// can be made (see cgroup_linux.go), which holds every descendant, those
// that left the group (setsid, setpgid) included: the cgroup is killed with
// the group. Without one, a program that may start others is started by a
// shepherd (see shepherd_linux.go), a subreaper that kills and sweeps
// everything below it when the program ends. Without either, and on other
// systems, a descendant that left the group outlives it.
//
// On Linux, where the Host may, the leader is also the init of a pid
// namespace of its own (see pidns_linux.go), which no descendant can
// leave and which the kernel empties when the leader ends: that holds
// even a descendant that moved itself out of the cgroup, or killed its
// shepherd.
//
// On Linux the leader is watched without being reaped, so that its group
// is killed while its pid cannot name anything else, and it gets a
// parent-death signal; on other Unix systems the group is killed just after
// the leader is reaped, and a Host that dies abruptly leaves its plugins to
// notice their closed stdin; elsewhere there are no groups, and only the
// leader is killed.
type Group struct {
	pgid   int           // the leader's pid, which names the group
	cg     *cgroup       // every descendant, where it can be made (Linux); nil otherwise
	sh     *shepherd     // the leader is the program's shepherd (Linux, no cgroup); nil otherwise
	ns     bool          // the leader is the init of a pid namespace of its own (Linux)
	exited chan struct{} // closed once the leader is reaped and Wait returned

	mu     sync.Mutex
	reaped bool // the leader was reaped: its pid may name a stranger now
	end    Ending
}

// An ending is how a group's program ended.
type Ending struct {
	Exited bool   // it exited, with code as its status; false when a signal killed it
	Code   int    // its exit status, when it exited
	How    string // as a person reads it: "exit status 1", "signal: killed"
}

// endingOf says how a program that exec waited for ended.
func endingOf(state *os.ProcessState, err error) Ending {
	switch {
	case state != nil:
		return Ending{Exited: state.Exited(), Code: state.ExitCode(), How: state.String()}
	case err != nil:
		return Ending{How: err.Error()}
	}
	return Ending{How: "exited"}
}

// Done is closed once the leader is reaped.
func (g *Group) Done() <-chan struct{} { return g.exited }

// pid returns the program's pid: the leader's, or the one its shepherd
// started.
func (g *Group) Pid() int {
	if g.sh != nil {
		return g.sh.pid
	}
	return g.pgid
}

// result returns how the program ended, once done.
func (g *Group) Result() Ending {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.end
}

// PGID is the process group's id: its leader's pid.
func (g *Group) PGID() int { return g.pgid }
