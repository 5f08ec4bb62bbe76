package escouade

import (
	"time"

	"shinken.dev/go/escouade/protocol"
)

// ProtocolVersion is the version of the plugin protocol this package speaks.
const ProtocolVersion = protocol.Version

// MethodTimeout returns how long a request of method is waited for: its
// timeoutMs in the schema, else the schema's x-defaultTimeoutMs; 0 for a
// notification or a method the protocol does not name. It serves both
// sides: how long a caller waits is how long a handler may take.
func MethodTimeout(method string) time.Duration { return protocol.MethodTimeout(method) }
