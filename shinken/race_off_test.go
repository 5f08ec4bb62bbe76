//go:build !race

package shinken_test

const raceEnabled = false
