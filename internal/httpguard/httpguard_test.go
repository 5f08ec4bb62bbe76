package httpguard_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"shinken.dev/go/internal/httpguard"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7040}
	loop6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 7040}
	pod := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 7040}
	pod6 := &net.TCPAddr{IP: net.ParseIP("fd00::5"), Port: 7040}
	named := &httpguard.Options{
		Hosts:   []string{"sandbox.example.com", "*.svc.example", "10.9.9.9", "fd00::9"},
		Origins: []string{"https://App.Example", "http://localhost:3000"},
	}
	for _, tt := range []struct {
		name   string
		opts   *httpguard.Options
		local  net.Addr // nil: no LocalAddrContextKey
		host   string
		origin []string
		want   error
	}{
		// Host on a loopback connection.
		{"loopback ip", nil, loop, "127.0.0.1:7040", nil, nil},
		{"loopback other ip of 127/8", nil, loop, "127.5.5.5:7040", nil, nil},
		{"localhost", nil, loop, "localhost:7040", nil, nil},
		{"localhost upper case, trailing dot", nil, loop, "LOCALHOST.:7040", nil, nil},
		{"a.localhost", nil, loop, "a.localhost", nil, nil},
		{"[::1] on ipv4 loopback", nil, loop, "[::1]:7040", nil, nil},
		{"[::1] on ipv6 loopback", nil, loop6, "[::1]:7040", nil, nil},
		{"loopback any port", nil, loop, "localhost:9", nil, nil},
		{"rebound name on loopback", nil, loop, "evil.example:7040", nil, httpguard.ErrHost},
		{"localhost.evil.example", nil, loop, "localhost.evil.example", nil, httpguard.ErrHost},
		{"empty host", nil, loop, "", nil, httpguard.ErrHost},
		{"public ip on loopback", nil, loop, "93.184.216.34", nil, httpguard.ErrHost},
		// Host on a non-loopback connection.
		{"pod: own address", nil, pod, "10.1.2.3:7040", nil, nil},
		{"pod: own address, no port", nil, pod, "10.1.2.3", nil, nil},
		{"pod: own ipv6 address", nil, pod6, "[fd00::5]:7040", nil, nil},
		{"pod: any name", nil, pod, "evil.example:7040", nil, httpguard.ErrHost},
		{"pod: localhost", nil, pod, "localhost:7040", nil, httpguard.ErrHost},
		{"pod: 127.0.0.1", nil, pod, "127.0.0.1:7040", nil, httpguard.ErrHost},
		{"pod: other address", nil, pod, "10.1.2.4:7040", nil, httpguard.ErrHost},
		{"pod: configured name", named, pod, "Sandbox.Example.com:443", nil, nil},
		{"pod: configured wildcard", named, pod, "a.b.svc.example", nil, nil},
		{"pod: wildcard parent refused", named, pod, "svc.example", nil, httpguard.ErrHost},
		{"pod: configured ip", named, pod, "10.9.9.9:1", nil, nil},
		{"pod: configured ipv6", named, pod, "[fd00:0::9]", nil, nil},
		{"pod: suffix lookalike", named, pod, "evilsandbox.example.com", nil, httpguard.ErrHost},
		// No LocalAddrContextKey: the configured names only.
		{"direct: configured name", named, nil, "sandbox.example.com", nil, nil},
		{"direct: localhost", named, nil, "localhost", nil, httpguard.ErrHost},
		// Origin.
		{"own origin", nil, loop, "localhost:7040", []string{"http://localhost:7040"}, nil},
		{"own origin upper case", nil, loop, "localhost:7040", []string{"HTTP://LocalHost:7040"}, nil},
		{"own origin, default port", nil, loop, "localhost", []string{"http://localhost"}, nil},
		{"own origin, explicit default port", nil, loop, "localhost:80", []string{"http://localhost"}, nil},
		{"https origin on an http server", nil, loop, "localhost:7040", []string{"https://localhost:7040"}, httpguard.ErrOrigin},
		{"https origin, default ports", nil, loop, "localhost", []string{"https://localhost"}, httpguard.ErrOrigin},
		{"own origin behind tls proxy, not listed", named, pod, "sandbox.example.com", []string{"https://sandbox.example.com"}, httpguard.ErrOrigin},
		{"own host, other port", nil, loop, "localhost:7040", []string{"http://localhost:3000"}, httpguard.ErrOrigin},
		{"foreign origin", nil, loop, "localhost:7040", []string{"https://evil.example"}, httpguard.ErrOrigin},
		{"null origin", nil, loop, "localhost:7040", []string{"null"}, httpguard.ErrOrigin},
		{"garbage origin", nil, loop, "localhost:7040", []string{"::"}, httpguard.ErrOrigin},
		{"origin with path", nil, loop, "localhost:7040", []string{"http://localhost:7040/x"}, httpguard.ErrOrigin},
		{"two origins", nil, loop, "localhost:7040", []string{"http://localhost:7040", "http://localhost:7040"}, httpguard.ErrOrigin},
		{"allowed origin", named, loop, "localhost:7040", []string{"https://app.example"}, nil},
		{"allowed origin, explicit port", named, loop, "localhost:7040", []string{"https://app.example:443"}, nil},
		{"allowed origin, other scheme", named, loop, "localhost:7040", []string{"http://app.example"}, httpguard.ErrOrigin},
		{"allowed dev origin", named, loop, "localhost:7040", []string{"http://localhost:3000"}, nil},
		{"rebinding page, its own origin", nil, loop, "evil.example:7040", []string{"http://evil.example:7040"}, httpguard.ErrHost},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := httpguard.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Host = tt.host
			for _, o := range tt.origin {
				r.Header.Add("Origin", o)
			}
			if tt.local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tt.local))
			}
			err = g.Check(r)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestTLSOrigin: over TLS the server's own origin is https, and an http
// page of the same host is another origin; a proxy's https origin passes
// once listed.
func TestTLSOrigin(t *testing.T) {
	t.Parallel()
	pod := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 443}
	listed := &httpguard.Options{Hosts: []string{"sandbox.example.com"}, Origins: []string{"https://sandbox.example.com"}}
	for _, tt := range []struct {
		name   string
		opts   *httpguard.Options
		tls    bool
		origin string
		want   error
	}{
		{"https own origin over tls", &httpguard.Options{Hosts: []string{"sandbox.example.com"}}, true, "https://sandbox.example.com", nil},
		{"http origin over tls", &httpguard.Options{Hosts: []string{"sandbox.example.com"}}, true, "http://sandbox.example.com:443", httpguard.ErrOrigin},
		{"proxy's https origin, listed", listed, false, "https://sandbox.example.com", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := httpguard.New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Host = "sandbox.example.com"
			r.Header.Set("Origin", tt.origin)
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, pod))
			if err := g.Check(r); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestSecFetchSite: a request with no Origin passes unless the browser
// says it is cross-site (a navigation or an embed from another site);
// same-origin and none (typed in the address bar) pass.
func TestSecFetchSite(t *testing.T) {
	t.Parallel()
	g, err := httpguard.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7040}
	for site, want := range map[string]error{
		"":            nil,
		"none":        nil,
		"same-origin": nil,
		"same-site":   nil,
		"cross-site":  httpguard.ErrOrigin,
		"Cross-Site":  httpguard.ErrOrigin,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = "localhost:7040"
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, loop))
		if err := g.Check(r); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("Sec-Fetch-Site %q: Check = %v, want %v", site, err, want)
		}
	}
}

func TestNewRefusesMalformed(t *testing.T) {
	t.Parallel()
	for _, o := range []*httpguard.Options{
		{Origins: []string{"app.example"}},
		{Origins: []string{"https://app.example/path"}},
		{Origins: []string{"null"}},
		{Hosts: []string{"app.example:443"}},
		{Hosts: []string{"https://app.example"}},
		{Hosts: []string{""}},
		{Hosts: []string{"a.*.example"}},
		{Hosts: []string{"*."}},
	} {
		if _, err := httpguard.New(o); err == nil {
			t.Errorf("New(%+v) accepted", *o)
		}
	}
}

// TestWebSocketUpgrade checks the rule where browsers apply it: a
// WebSocket upgrade over a real loopback socket, from the page's own
// origin, from another, and from a non-browser client.
func TestWebSocketUpgrade(t *testing.T) {
	t.Parallel()
	g, err := httpguard.New(&httpguard.Options{Origins: []string{"https://console.example"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		c.Close(websocket.StatusNormalClosure, "")
	})))
	defer srv.Close()
	own := srv.URL // http://127.0.0.1:port
	for _, tt := range []struct {
		name, host, origin string
		wantStatus         int
	}{
		{"no origin", "", "", http.StatusSwitchingProtocols},
		{"own origin", "", own, http.StatusSwitchingProtocols},
		{"allowed origin", "", "https://console.example", http.StatusSwitchingProtocols},
		{"foreign origin", "", "https://evil.example", http.StatusForbidden},
		{"rebound host", "evil.example", "http://evil.example", http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			if tt.host != "" {
				h.Set("Host", tt.host)
			}
			c, resp, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: h, Host: tt.host})
			if c != nil {
				c.CloseNow()
			}
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tt.wantStatus, err)
			}
		})
	}
}

// TestUnixSocketUnchecked serves a guard over a unix socket, which no
// browser reaches: any Host and Origin pass there, while the same request
// over TCP is refused.
func TestUnixSocketUnchecked(t *testing.T) {
	t.Parallel()
	g, err := httpguard.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	sock := filepath.Join(t.TempDir(), "s")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	us := &http.Server{Handler: h}
	go us.Serve(ul)
	defer us.Close()
	tcp := httptest.NewServer(h)
	defer tcp.Close()
	unixClient := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer unixClient.CloseIdleConnections()
	for _, tt := range []struct {
		name   string
		c      *http.Client
		url    string
		status int
	}{
		{"unix", unixClient, "http://sandbox/", http.StatusOK},
		{"tcp", tcp.Client(), tcp.URL, http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
		req.Host = "evil.example"
		req.Header.Set("Origin", "https://evil.example")
		resp, err := tt.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}
}

func ExampleGuard_Handler() {
	g, err := httpguard.New(&httpguard.Options{Origins: []string{"https://console.example"}})
	if err != nil {
		panic(err)
	}
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, origin := range []string{"", srv.URL, "https://console.example", "https://evil.example"} {
		req, _ := http.NewRequest("POST", srv.URL, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		switch origin {
		case "":
			origin = "[no Origin]"
		case srv.URL:
			origin = "its own origin"
		}
		fmt.Println(origin, resp.StatusCode)
	}
	// Output:
	// [no Origin] 200
	// its own origin 200
	// https://console.example 200
	// https://evil.example 403
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
