//go:build !linux

package contain

import (
	"fmt"
	"os"
)

// shepherdEnv names the variable of a shepherd's process, Linux's alone.
const shepherdEnv = "ESCOUADE_SHEPHERD"

// A shepherd is Linux's (a child subreaper); elsewhere the process group
// is all there is.
type shepherd struct{ pid int }

// runShepherd refuses: no Host here starts a shepherd.
func RunShepherd() int {
	fmt.Fprintln(os.Stderr, "escouade: a shepherd runs on Linux only")
	return exitBoot
}
