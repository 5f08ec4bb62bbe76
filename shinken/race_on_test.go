//go:build race

package shinken_test

// raceEnabled: the race detector keeps shadow memory that is never given
// back, so memory checks are off under it.
const raceEnabled = true
