package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed page
var pageFS embed.FS

// pageCSP keeps the page to its own scripts, styles and connections (its
// WebSockets to the daemon), and out of any other site's frames: a page
// that takes the input over must not be framed (clickjacking).
const pageCSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' blob: data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// routes is the daemon's mux.
func (d *Daemon) routes() http.Handler {
	g := &guard{hosts: d.opts.Hosts, origins: d.opts.Origins}
	mux := http.NewServeMux()
	mux.Handle(PathACI, g.wrap(d.served))
	mux.HandleFunc(PathHealthz, healthz)
	mux.Handle(PathReadyz, d.ready)
	if d.reg != nil && d.metricsL == nil && (d.opts.Metrics == nil || d.opts.Metrics.Listen == "") {
		mux.Handle(PathMetrics, bearer(d.served.token, promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{Registry: d.reg})))
	}
	if d.mcp != nil {
		mux.Handle(PathMCP, g.wrap(d.mcp))
	}
	if d.opts.Page {
		in := &inspector{rt: d.served.current, feed: d.feed, token: d.served.token, log: d.log, ctx: d.ctx, origins: originHosts(d.opts.Origins)}
		mux.Handle(PathInspect, g.wrap(in))
		page, _ := fs.Sub(pageFS, "page")
		mux.Handle("/", pageHeaders(http.FileServerFS(page)))
	}
	return mux
}

// pageHeaders adds the page's security headers.
func pageHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// bearer serves h only to requests with the current token as a bearer
// token, compared in constant time.
func bearer(token func() string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !tokenEqual(got, token()) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// tokenEqual compares a token sent with the one in force in constant
// time; no token in force matches nothing.
func tokenEqual(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return want != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// guard refuses, with 403, a request whose Host the daemon does not
// answer to (DNS rebinding: a site whose name resolves to the daemon's
// address) or that a browser sent from another site's page (cross-site
// WebSocket hijacking, the MCP transport's Origin rule). The same rule
// holds on every TCP listener, loopback or not; a unix socket or vsock,
// which no browser reaches, is checked for Origin only.
type guard struct {
	hosts   []string // besides IP literals and localhost
	origins []string // besides the request's own
}

func (g *guard) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if viaTCP(r) && !g.hostOK(r.Host) {
			http.Error(w, "forbidden: this daemon does not answer to the host "+quoteBounded(r.Host), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.originOK(o, r.Host) {
			http.Error(w, "forbidden: requests from the origin "+quoteBounded(o)+" are not allowed", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// viaTCP says whether r came over TCP, where a browser may have sent it:
// over a unix socket or vsock, the Host is the client's own business.
func viaTCP(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return !ok || strings.HasPrefix(a.Network(), "tcp")
}

// hostOK says whether the daemon answers to hostport: an IP address
// (which no rebinding can name), localhost, or a configured name. A
// request with no Host (HTTP/1.0, a unix socket's client) passes.
func (g *guard) hostOK(hostport string) bool {
	if hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	return matchName(g.hosts, host)
}

// originOK says whether a browser's Origin may talk to the daemon: its
// host is the request's Host (the page's own origin), or it is listed.
func (g *guard) originOK(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" (a sandboxed frame, a file:) and garbage
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	return matchName(g.origins, strings.ToLower(origin)) || matchName(g.origins, strings.ToLower(u.Host))
}

// originHosts are the hosts of origins, as websocket.AcceptOptions'
// OriginPatterns take them.
func originHosts(origins []string) []string {
	var hs []string
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			o = u.Host
		}
		hs = append(hs, o)
	}
	return hs
}

// matchName matches name against names and "*.suffix" patterns.
func matchName(patterns []string, name string) bool {
	for _, p := range patterns {
		p = strings.ToLower(p)
		if ok, _ := path.Match(p, name); ok || p == name {
			return true
		}
	}
	return false
}

// quoteBounded quotes s for a message, at most 64 bytes of it.
func quoteBounded(s string) string {
	const max = 64
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return strconv.Quote(s)
}
