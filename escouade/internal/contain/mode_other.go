//go:build !linux

package contain

// Holder says what holds the descendants of the programs started now:
// here the process group alone ("").
func Holder() string { return "" }

// SetMode does nothing here: the process group is all there is.
func SetMode(string) (restore func()) { return func() {} }

// CgroupParent is "": only Linux has cgroups.
func CgroupParent() string { return "" }

// PIDNamespaces is false: only Linux has pid namespaces.
func PIDNamespaces() bool { return false }

// PIDNamespaceRefused is nil: no namespace is ever tried here.
func PIDNamespaceRefused() error { return nil }

// SetPIDNamespaces does nothing here: there are no pid namespaces.
func SetPIDNamespaces(bool) (restore func()) { return func() {} }

// SetUserNamespaces does nothing here: there are no user namespaces.
func SetUserNamespaces(bool) (restore func()) { return func() {} }

// SetPrivateMounts does nothing here: there are no mount namespaces.
func SetPrivateMounts(bool) (restore func()) { return func() {} }

// PrivateMountsRefused is nil: no mount namespace is ever tried here.
func PrivateMountsRefused() error { return nil }
