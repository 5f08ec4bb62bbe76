package xconn

// SetRegistered pretends that another server of the process numbered
// name's events and errors from event and error.
func SetRegistered(name string, event, error int) (restore func()) {
	extMu.Lock()
	defer extMu.Unlock()
	old, had := registered[name]
	registered[name] = base{event, error}
	return func() {
		extMu.Lock()
		defer extMu.Unlock()
		if had {
			registered[name] = old
		} else {
			delete(registered, name)
		}
	}
}
