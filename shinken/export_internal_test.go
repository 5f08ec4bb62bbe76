package shinken

// Encodes returns how many images rt has encoded, for tests that prove an
// answer cost no encoding.
func Encodes(rt *Runtime) uint64 { return rt.encodes.Load() }

// CastStats sums the ticks and sent frames of rt's screencasts.
func CastStats(rt *Runtime) (ticks, frames uint64) {
	rt.casts.mu.Lock()
	defer rt.casts.mu.Unlock()
	for _, s := range rt.casts.streams {
		ticks += s.ticks.Load()
		frames += s.frames.Load()
	}
	return ticks, frames
}

// MaxQueue returns the longest outgoing queue among rt's connections.
func MaxQueue(rt *Runtime) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n := 0
	for c := range rt.live {
		n = max(n, len(c.out))
	}
	return n
}

// LiveConns returns how many sessions rt serves.
func LiveConns(rt *Runtime) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return len(rt.live)
}
