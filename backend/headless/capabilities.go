package headless

import "shinken.dev/go/shinken"

// The capabilities a Desktop serves, checked at compile time.
var (
	_ shinken.Capturer        = (*Desktop)(nil)
	_ shinken.Injector        = (*Desktop)(nil)
	_ shinken.A11y            = (*Desktop)(nil)
	_ shinken.ChangeWatcher   = (*Desktop)(nil)
	_ shinken.Clipboard       = (*Desktop)(nil)
	_ shinken.Windows         = (*Desktop)(nil)
	_ shinken.Launcher        = (*Desktop)(nil)
	_ shinken.PointerReporter = (*Desktop)(nil)
)
