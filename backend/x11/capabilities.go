package x11

import "shinken.dev/go/shinken"

// The capabilities a Backend serves, and those WithAccessibility adds,
// checked at compile time.
var (
	_ shinken.Capturer        = (*Backend)(nil)
	_ shinken.Injector        = (*Backend)(nil)
	_ shinken.Clipboard       = (*Backend)(nil)
	_ shinken.Windows         = (*Backend)(nil)
	_ shinken.Launcher        = (*Backend)(nil)
	_ shinken.PointerReporter = (*Backend)(nil)
	_ shinken.DamageTracker   = (*Backend)(nil)
	_ shinken.Settler         = (*Backend)(nil)
	_ shinken.A11y            = (*Accessible)(nil)
	_ shinken.ChangeWatcher   = (*Accessible)(nil)
)
