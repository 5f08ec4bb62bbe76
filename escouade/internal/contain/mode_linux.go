package contain

// Holder says what holds the descendants of the programs started now:
// "cgroup", "shepherd", or "" (the process group alone).
func Holder() string {
	mode := containment(containMode.Load())
	switch {
	case mode == containAuto && cgroupParent() != "" && !noCgroups.Load():
		return "cgroup"
	case useShepherd():
		return "shepherd"
	}
	return ""
}

// SetMode makes the programs started from now on held by what mode
// names: "auto" (a cgroup where one can be made, else a shepherd),
// "shepherd" (never a cgroup) or "group" (the process group alone). It
// returns what sets it back. Tests use it to try each way on a machine
// where all work.
func SetMode(mode string) (restore func()) {
	m := map[string]containment{"auto": containAuto, "shepherd": containShepherd, "group": containGroup}[mode]
	old := containMode.Swap(int32(m))
	return func() { containMode.Store(old) }
}

// CgroupParent is the Host's own cgroup folder, where it makes its
// programs' cgroups; "" when it makes none.
func CgroupParent() string { return cgroupParent() }
