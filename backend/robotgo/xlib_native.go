//go:build robotgo && (darwin || windows)

package robotgo

// On macOS and Windows robotgo talks to the system directly: no request
// ends the process and there is no connection to close.

// isX11 is true where robotgo drives an X server.
const isX11 = false

func installXErrorHandler() {}

func takeXError() int { return 0 }

func canOpenDisplay() bool { return true }

func closeMainDisplay() {}

// typeSpare is X11's: robotgo types every character itself elsewhere.
func typeSpare(rune) error { return nil }
