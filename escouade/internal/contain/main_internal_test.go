package contain

import (
	"os"
	"testing"
)

// TestMain runs this binary as a shepherd when it is started again as one,
// as a Host's EngineMain does.
func TestMain(m *testing.M) {
	if IsShepherd() {
		os.Exit(RunShepherd())
	}
	os.Exit(m.Run())
}
