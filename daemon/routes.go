package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"io/fs"
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"shinken.dev/go/internal/httpguard"
)

//go:embed page
var pageFS embed.FS

// pageCSP keeps the page to its own scripts, styles and connections (its
// WebSockets to the daemon), and out of any other site's frames: a page
// that takes the input over must not be framed (clickjacking).
const pageCSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' blob: data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// routes is the daemon's mux.
func (d *Daemon) routes(g *httpguard.Guard) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(PathACI, guarded(g, d.served))
	mux.HandleFunc(PathHealthz, healthz)
	mux.Handle(PathReadyz, d.ready)
	if d.reg != nil && d.metricsL == nil && (d.opts.Metrics == nil || d.opts.Metrics.Listen == "") {
		mux.Handle(PathMetrics, guarded(g, bearer(d.served.token, promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{Registry: d.reg}))))
	}
	if d.mcp != nil {
		mux.Handle(PathMCP, guarded(g, d.mcp))
	}
	if d.opts.Page {
		in := &inspector{rt: d.served.current, feed: d.feed, token: d.served.token, log: d.log, ctx: d.ctx, origins: originHosts(d.opts.Origins)}
		mux.Handle(PathInspect, guarded(g, in))
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

// guarded serves h only to requests that g lets through (a unix socket or
// vsock, which no browser reaches, is not checked).
func guarded(g *httpguard.Guard, h http.Handler) http.Handler { return g.Handler(h) }

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
