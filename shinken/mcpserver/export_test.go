package mcpserver

// The tools' structured results, for the tests that decode them.
type (
	CommandRead    = commandRead
	CommandStarted = commandStarted
	CommandList    = commandList
	CursorPosition = cursorPosition
	WaitForOutput  = waitForOutput
	ObserveOutput  = observeOutput
	Windows        = windows
	Window         = window
	ClipboardText  = clipboardText
	ExecOutput     = execOutput
)
