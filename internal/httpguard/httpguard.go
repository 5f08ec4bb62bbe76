// Package httpguard is the module's one check of a request's Origin and
// Host headers, as net/http middleware: the same rule for plain requests
// (MCP's streamable HTTP, a page) and for WebSocket upgrades (ACI, the
// takeover page), answering 403 before the handler, and so before any
// token is looked at.
//
// Two attacks are kept out:
//
//   - Cross-site requests from a browser (cross-site WebSocket hijacking,
//     a page posting to a local MCP server): a request whose Origin header
//     is neither the server's own origin (the Origin's host equals the
//     request's Host, and its scheme is the connection's: https only over
//     TLS, http only without) nor in Options.Origins is refused, whatever
//     else it carries. A request without Origin passes, unless its
//     Sec-Fetch-Site header says cross-site (a browser's request that
//     lost its Origin, a navigation or an embed): browsers send an Origin
//     on every WebSocket upgrade and every cross-origin fetch or form
//     post, and non-browser clients (an SDK, curl) send neither header.
//     Behind a proxy that ends TLS, the page's https:// origin is not the
//     server's own (the server sees http): list it in Options.Origins.
//   - DNS rebinding: a page on evil.example whose name is made to resolve
//     to the server's address is same-origin with itself, so the Origin
//     rule alone lets it in; its requests carry Host: evil.example. The
//     Host header must name the server: one of Options.Hosts, the address
//     of the connection's own end (an IP literal, as probes and clients
//     that dial an address send it), or, on a connection that arrived on a
//     loopback address, a loopback name (localhost, *.localhost,
//     127.0.0.0/8, ::1). Ports are not compared: a port mapping or a proxy
//     may change them, and the name is what rebinding forges.
//
// The connection's own end is read from the request's context
// ([http.LocalAddrContextKey], which net/http's Server sets): a listener on
// all interfaces judges a connection that came in on 127.0.0.1 (a port
// forward) as loopback and one on the pod's address as not. A request
// served without that key (a handler called directly) accepts only
// Options.Hosts. A request that came over a unix socket or a vsock (any
// stream that is not TCP) is not checked at all: no browser reaches one.
//
// Go's [http.CrossOriginProtection] is not used: it lets every GET, HEAD
// and OPTIONS request through, and a WebSocket upgrade and MCP's event
// stream are GET requests; it does not look at Host either, and accepts a
// request whose Sec-Fetch-Site says same-origin, which a rebound name is.
package httpguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Options configure a Guard. A nil *Options means defaults.
type Options struct {
	// Hosts lists the names (or IP addresses) the Host header may carry on
	// any connection, without port: the names a proxy, a Service or a DNS
	// entry gives the server ("shinken.example.com", "sandbox-0.ns.svc").
	// A name starting with "*." also accepts every name below it
	// ("*.example.com" accepts "a.example.com", not "example.com").
	// Default none: loopback names on loopback connections and the
	// connection's own address only.
	Hosts []string
	// Origins lists the browser origins allowed besides the server's own,
	// each "scheme://host" or "scheme://host:port" ("https://app.example",
	// "http://localhost:3000"), compared whole (scheme, host and port, the
	// scheme's default port implied). Default none.
	Origins []string
}

// A Guard checks requests' Origin and Host headers. It is safe for
// concurrent use; its options are fixed by New.
type Guard struct {
	hosts    map[string]bool
	suffixes []string // ".example.com" for "*.example.com"
	origins  map[string]bool
}

// Errors that Check returns, wrapped with the header's value.
var (
	// ErrHost: the Host header names something else than this server.
	ErrHost = errors.New("httpguard: Host not allowed")
	// ErrOrigin: the request comes from a browser page of another origin.
	ErrOrigin = errors.New("httpguard: Origin not allowed")
)

// New returns a Guard for opts, or an error naming an entry of
// opts.Origins or opts.Hosts that is not well formed.
func New(opts *Options) (*Guard, error) {
	g := &Guard{hosts: map[string]bool{}, origins: map[string]bool{}}
	if opts == nil {
		return g, nil
	}
	for _, h := range opts.Hosts {
		n := strings.ToLower(strings.TrimSuffix(h, "."))
		if n == "" || strings.ContainsAny(n, ":/@ ") && !isIPv6(n) {
			return nil, fmt.Errorf("httpguard: host %q: want a name or an address, without port", h)
		}
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if rest == "" || strings.Contains(rest, "*") {
				return nil, fmt.Errorf("httpguard: host %q: a wildcard is one leading \"*.\"", h)
			}
			g.suffixes = append(g.suffixes, "."+rest)
			continue
		}
		if strings.Contains(n, "*") {
			return nil, fmt.Errorf("httpguard: host %q: a wildcard is one leading \"*.\"", h)
		}
		g.hosts[canonicalHost(n)] = true
	}
	for _, o := range opts.Origins {
		c, ok := canonicalOrigin(o)
		if !ok {
			return nil, fmt.Errorf("httpguard: origin %q: want scheme://host[:port]", o)
		}
		g.origins[c] = true
	}
	return g, nil
}

// Handler wraps h: a request that Check refuses is answered 403 Forbidden
// with the reason as a plain-text body, and never reaches h.
func (g *Guard) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Check returns nil if r may be served, or an error wrapping ErrHost or
// ErrOrigin. The Host is checked first: a rebound name is refused even
// from its own origin.
func (g *Guard) Check(r *http.Request) error {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil && !strings.HasPrefix(a.Network(), "tcp") {
		return nil // a unix socket or a vsock: no browser's request
	}
	if !g.hostAllowed(r) {
		return fmt.Errorf("%w: %q", ErrHost, truncate(r.Host))
	}
	origins := r.Header.Values("Origin")
	switch {
	case len(origins) == 0 && strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site"):
		return fmt.Errorf("%w: no Origin, and Sec-Fetch-Site: cross-site", ErrOrigin)
	case len(origins) == 0:
		return nil
	case len(origins) > 1:
		return fmt.Errorf("%w: %d Origin headers", ErrOrigin, len(origins))
	}
	if !g.originAllowed(origins[0], r.Host, r.TLS != nil) {
		return fmt.Errorf("%w: %q", ErrOrigin, truncate(origins[0]))
	}
	return nil
}

func (g *Guard) hostAllowed(r *http.Request) bool {
	name := hostOnly(r.Host)
	if name == "" {
		return false
	}
	if g.hosts[name] {
		return true
	}
	for _, s := range g.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	local, ok := localAddr(r)
	if !ok {
		return false
	}
	ip, err := netip.ParseAddr(strings.Trim(name, "[]"))
	if err == nil {
		ip = ip.Unmap()
		if ip == local {
			return true
		}
		return local.IsLoopback() && ip.IsLoopback()
	}
	return local.IsLoopback() && (name == "localhost" || strings.HasSuffix(name, ".localhost"))
}

// originAllowed reports whether origin is the server's own (its host is
// the request's Host, its scheme https if and only if the connection is
// TLS) or one of the allowed ones.
func (g *Guard) originAllowed(origin, host string, tls bool) bool {
	c, ok := canonicalOrigin(origin)
	if !ok {
		return false // "null" (a sandboxed frame, a file), or garbage
	}
	if g.origins[c] {
		return true
	}
	u, _ := url.Parse(c)
	if (u.Scheme == "https" || u.Scheme == "wss") != tls {
		return false
	}
	return strings.EqualFold(withDefaultPort(u.Scheme, u.Host), withDefaultPort(u.Scheme, host))
}

// localAddr is the address of the connection's own end, if the server
// recorded it.
func localAddr(r *http.Request) (netip.Addr, bool) {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap().WithZone(""), true
}

// hostOnly is the Host header's name, lower case, without port or
// trailing dot; IPv6 literals keep their brackets.
func hostOnly(hostport string) string {
	h := strings.ToLower(hostport)
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return ""
		}
		return canonicalHost(h[:end+1])
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return canonicalHost(strings.TrimSuffix(h, "."))
}

// canonicalHost writes an IP address one way (so that "::1", "[::1]" and
// "[0:0::1]" match), and leaves a name as it is.
func canonicalHost(h string) string {
	if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		ip = ip.Unmap()
		if ip.Is6() {
			return "[" + ip.String() + "]"
		}
		return ip.String()
	}
	return h
}

// canonicalOrigin is origin as "scheme://host:port", lower case with the
// scheme's default port made explicit, if it is an origin at all.
func canonicalOrigin(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := hostOnly(u.Host)
	if host == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	if port == "" {
		return scheme + "://" + host, true
	}
	return scheme + "://" + host + ":" + port, true
}

// withDefaultPort is hostport with scheme's default port added if it has
// none, in canonical form.
func withDefaultPort(scheme, hostport string) string {
	host := hostOnly(hostport)
	port := defaultPort(scheme)
	if _, p, err := net.SplitHostPort(hostport); err == nil && p != "" {
		port = p
	}
	if port == "" {
		return host
	}
	return host + ":" + port
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

func isIPv6(s string) bool {
	ip, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil && ip.Is6()
}

// truncate bounds a header's value quoted in an error (and so in a log
// line or a response body).
func truncate(s string) string {
	const max = 128
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
