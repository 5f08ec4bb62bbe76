package contain

import (
	"os"
	"testing"
)

// TestMain runs this binary as a shepherd when it is started again as one,
// as a Host's EngineMain does, and as the tracer of TestFixedInitNotDumpable.
func TestMain(m *testing.M) {
	if IsShepherd() {
		os.Exit(RunShepherd())
	}
	if os.Getenv(tracerEnv) == "1" {
		os.Exit(traceParent())
	}
	os.Exit(m.Run())
}
