//go:build !linux

package escouade_test

import (
	"context"
	"io"
)

// runTerminalHelper knows no mode here: TestHostileTerminal is Linux's.
func runTerminalHelper(context.Context, io.Reader, io.Writer, string, []string) int { return 2 }
