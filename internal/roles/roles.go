// Package roles holds what the runtime and the backends must agree on about
// accessibility roles, in one place.
package roles

// PopupOwner reports whether role's children show in pop-up windows of
// their own (override-redirect menus, combo lists): nothing above such a
// node clips its children, in the runtime's tree text as in a backend's
// hit tests.
func PopupOwner(role string) bool {
	switch role {
	case "combo box", "menu", "menu bar", "menu item",
		"check menu item", "radio menu item", "popup menu":
		return true
	}
	return false
}
