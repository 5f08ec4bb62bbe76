package httpguard_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"shinken.dev/go/internal/httpguard"
)

// FuzzCheck: any Host and Origin is judged without panicking, and a
// request passed with an Origin comes from the server's own host or the
// allowed origin; on a public listener, a passed Host is the address or
// the configured name.
func FuzzCheck(f *testing.F) {
	for _, s := range [][2]string{
		{"localhost:7040", "http://localhost:7040"}, {"evil.example", "http://evil.example"}, {"[::1]:80", ""},
		{"10.1.2.3", "https://app.example"}, {"sandbox.example.com.", "null"}, {"[::ffff:10.1.2.3]", "http://[::1"},
	} {
		f.Add(s[0], s[1], true)
		f.Add(s[0], s[1], false)
	}
	g, err := httpguard.New(&httpguard.Options{Hosts: []string{"sandbox.example.com"}, Origins: []string{"https://app.example"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host, origin string, loopback bool) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		local := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 7040}
		if loopback {
			local.IP = net.IPv4(127, 0, 0, 1)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
		if g.Check(r) != nil {
			return
		}
		if !loopback {
			h := strings.ToLower(strings.TrimSuffix(hostname(host), "."))
			if h != "10.1.2.3" && h != "sandbox.example.com" && h != "::ffff:10.1.2.3" {
				t.Fatalf("Host %q passed on a public listener", host)
			}
		}
		if origin == "" {
			return
		}
		u, err := url.Parse(origin)
		if err != nil {
			t.Fatalf("Origin %q passed: %v", origin, err)
		}
		if !strings.EqualFold(u.Hostname(), hostname(host)) && !strings.EqualFold(origin, "https://app.example") &&
			!strings.EqualFold(strings.TrimSuffix(origin, "/"), "https://app.example:443") && !strings.EqualFold(strings.TrimSuffix(origin, "/"), "https://app.example") {
			t.Fatalf("Origin %q passed for Host %q", origin, host)
		}
	})
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
