package schematest

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
)

// Serve serves b through a Runtime made with opts (token "t" unless opts
// names one) on a test server, behind a validating proxy, and returns a
// client dialled through the proxy: every message the runtime sends in
// the test is checked against the schema. All of it ends with the test.
// It is the module's own tests' rig; shinkentest.Serve is the one for
// users, who link no validator.
func Serve(t testing.TB, b shinken.Backend, opts *shinken.RuntimeOptions) *client.Client {
	t.Helper()
	o := shinken.RuntimeOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Token == "" {
		o.Token = "t"
	}
	rt := shinken.NewRuntime(b, &o)
	srv := httptest.NewServer(rt)
	t.Cleanup(func() {
		srv.Close()
		rt.Close()
	})
	proxy := NewProxy(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, proxy.URL, &client.DialOptions{Token: o.Token})
	if err != nil {
		t.Fatalf("schematest: dial the runtime: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
