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
	url, token := ServeURL(t, b, opts)
	return Dial(t, url, &client.DialOptions{Token: token})
}

// ServeURL is Serve without the client: it returns the proxy's URL and
// the runtime's token, for a test that dials more than one session or
// dials with options of its own (Dial).
func ServeURL(t testing.TB, b shinken.Backend, opts *shinken.RuntimeOptions) (url, token string) {
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
	return NewProxy(t, "ws"+strings.TrimPrefix(srv.URL, "http")).URL, o.Token
}

// Dial dials url with opts (token "t" unless opts names one) within a
// minute, failing t if it cannot; the client is closed when the test ends.
func Dial(t testing.TB, url string, opts *client.DialOptions) *client.Client {
	t.Helper()
	o := client.DialOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Token == "" {
		o.Token = "t"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, url, &o)
	if err != nil {
		t.Fatalf("schematest: dial the runtime: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
