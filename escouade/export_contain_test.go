package escouade

import "shinken.dev/go/escouade/internal/contain"

// Contained reports whether the programs started now have their
// descendants held: by a cgroup of their own, or by a shepherd.
func Contained() bool { return Containment() != "" }

// Containment says what holds the descendants of the programs started now:
// "cgroup", "shepherd", or "" (the process group alone).
func Containment() string { return contain.Holder() }

// SetContainment makes the programs started from now on held by what
// mode names: "auto", "shepherd" or "group" (see contain.SetMode).
func SetContainment(mode string) (restore func()) { return contain.SetMode(mode) }

// CgroupParent is the Host's own cgroup folder, where it makes its
// programs' cgroups; "" when it makes none.
func CgroupParent() string { return contain.CgroupParent() }

// SetShepherds makes the programs started from now on get a shepherd (on)
// or, as in a program that does not call EngineMain, a fixed init (off);
// see contain.SetShepherds.
func SetShepherds(on bool) (restore func()) { return contain.SetShepherds(on) }

// SetPrivateMounts makes the programs started from now on in a pid
// namespace get a /proc and cgroup hierarchy of their own (on) or the
// machine's (off); see contain.SetPrivateMounts.
func SetPrivateMounts(on bool) (restore func()) { return contain.SetPrivateMounts(on) }
