package escouade

import "shinken.dev/go/escouade/internal/contain"

// PIDNamespaces reports whether the programs started now that may start
// others are each the init of a pid namespace of their own, or their
// shepherd is (see contain.PIDNamespaces).
func PIDNamespaces() bool { return contain.PIDNamespaces() }

// SetPIDNamespaces makes the programs started from now on get a pid
// namespace where one can be made (on) or never (off), and returns what
// sets it back (see contain.SetPIDNamespaces).
func SetPIDNamespaces(on bool) (restore func()) { return contain.SetPIDNamespaces(on) }
