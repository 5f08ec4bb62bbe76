package shinken

// Encodes returns how many images rt has encoded, for tests that prove an
// answer cost no encoding.
func Encodes(rt *Runtime) uint64 { return rt.encodes.Load() }
