// Package contain holds the programs the plugin host starts for its
// plugins, and all they start: each in a process group of its own, and on
// Linux in a cgroup of its own where one can be made, else under a
// shepherd (the program that links the host, started again), so that
// nothing a plugin started outlives it. It also bounds an engine's own
// process (LimitSelf). The host's REFERENCE.md says, system by system,
// what holds.
package contain

import (
	"os"
	"runtime"
	"sync/atomic"
)

// RuntimeVars are the variables of the Host's environment a program it
// starts again (an engine, a shepherd) is given: the Go runtime's knobs,
// which carry no secret.
var RuntimeVars = []string{"GODEBUG", "GOMAXPROCS", "GORACE"}

// SelfPath is the program to start again as an engine or a shepherd: on
// Linux the running binary itself, even if its file was replaced since.
func SelfPath() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// shepherdVersion is what ShepherdEnv holds in a shepherd's environment.
const shepherdVersion = "1"

// exitBoot is a shepherd's exit status when its first line does not hold.
const exitBoot = 70

// reexec is set by AllowShepherd: the program runs RunShepherd when it is
// started again as one (the host's EngineMain).
var reexec atomic.Bool

// AllowShepherd says that the program, started again with IsShepherd
// true, runs RunShepherd: shepherds may be used from now on.
func AllowShepherd() { reexec.Store(true) }

// IsShepherd reports whether this process was started as a shepherd.
func IsShepherd() bool { return os.Getenv(shepherdEnv) == shepherdVersion }

// shepherdsOff is set by SetShepherds(false).
var shepherdsOff atomic.Bool

// SetShepherds makes the programs started from now on get a shepherd
// where AllowShepherd was called (on, the default), or never (off), as in
// a program that does not call EngineMain. It returns what sets it back.
func SetShepherds(on bool) (restore func()) {
	old := shepherdsOff.Swap(!on)
	return func() { shepherdsOff.Store(old) }
}
