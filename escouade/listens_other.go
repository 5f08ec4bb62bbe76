//go:build !linux

package escouade

// listensOn: only Linux tells which process holds a socket here; elsewhere
// local:shared opens the port the shared process printed.
func listensOn(*group, int) bool { return true }
