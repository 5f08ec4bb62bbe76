//go:build !unix

package escouade

import (
	"errors"
	"time"
)

// engineSupported: an isolated engine needs descriptors beyond standard
// input and output and resource limits, which this system does not give.
const engineSupported = false

func limitSelf(int64, time.Duration) error { return errors.ErrUnsupported }
