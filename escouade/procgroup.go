package escouade

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
// the group. Without one, and on other systems, a descendant that left the
// group outlives it.
//
// On Linux the leader is watched without being reaped, so that its group
// is killed while its pid cannot name anything else, and it gets a
// parent-death signal; on other Unix systems the group is killed just after
// the leader is reaped, and a Host that dies abruptly leaves its plugins to
// notice their closed stdin; elsewhere there are no groups, and only the
// leader is killed.
type group struct {
	pgid   int           // the leader's pid, which names the group
	cg     *cgroup       // every descendant, where it can be made (Linux); nil otherwise
	exited chan struct{} // closed once the leader is reaped and Wait returned

	mu     sync.Mutex
	reaped bool // the leader was reaped: its pid may name a stranger now
	state  *os.ProcessState
	err    error
}

func (g *group) done() <-chan struct{} { return g.exited }

// result returns how the leader ended, once done.
func (g *group) result() (*os.ProcessState, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state, g.err
}
