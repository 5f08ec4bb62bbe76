//go:build !unix

package contain

import (
	"errors"
	"time"
)

// LimitsSupported: an isolated engine needs descriptors beyond standard
// input and output and resource limits, which this system does not give.
const LimitsSupported = false

func LimitSelf(int64, time.Duration) error { return errors.ErrUnsupported }
