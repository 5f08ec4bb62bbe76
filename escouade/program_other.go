//go:build !linux

package escouade

// execHeld says that a command plugin's program runs from the file held
// since its first start: not here, where no path names a descriptor for
// every kind of program; its path runs, checked first.
const execHeld = false

// heldPath is unused here.
const heldPath = ""
