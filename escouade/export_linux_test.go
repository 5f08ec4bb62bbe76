package escouade

// Contained reports whether the programs started now get a cgroup of
// their own, which holds every descendant.
func Contained() bool { return cgroupParent() != "" && !noCgroups.Load() }
