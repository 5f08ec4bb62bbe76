//go:build !linux

package contain

// A cgroup is Linux's; elsewhere the process group is what is killed.
type cgroup struct{}
