//go:build !linux

package contain

// listensOn: only Linux tells which process holds a socket here; elsewhere
// local:shared opens the port the shared process printed.
func ListensOn(*Group, int) bool { return true }
