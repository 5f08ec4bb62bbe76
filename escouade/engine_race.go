//go:build race

package escouade

// raceMemoryFactor scales an engine's memory bound in a program built with
// the race detector, whose shadow memory is mapped as the heap grows.
const raceMemoryFactor = 8
