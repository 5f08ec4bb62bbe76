package shinkentest

import (
	"testing"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
)

// ServeProxied is Serve dialling through proxy, for the external tests,
// which check every message against the ACI schema.
func ServeProxied(t testing.TB, b shinken.Backend, opts *shinken.RuntimeOptions, proxy func(testing.TB, string) string) *client.Client {
	t.Helper()
	return serveTraced(t, b, opts, proxy, onCI())
}
