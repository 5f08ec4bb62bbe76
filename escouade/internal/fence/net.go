package fence

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/escouade/internal/fields"
	"shinken.dev/go/escouade/internal/ssrf"
	"shinken.dev/go/escouade/protocol"
)

// The fences of net/* and ws/*.
const (
	fetchTimeout   = 10 * time.Second // net/fetch's answer, and a stream's headers, unless limits.fetchMs
	fetchBytes     = 1 << 20          // net/fetch's body, unless limits.fetchBytes
	maxHeaderBytes = 64 << 10         // the headers of an answer
	maxStreams     = 8                // net/stream at once
	streamWindow   = 256 << 10        // bytes sent and not yet credited
	streamIdle     = 120 * time.Second
	streamChunk    = 32 << 10
	maxSockets     = 4
	maxWSMessage   = 1 << 20   // a message, either way
	maxWSQueue     = 256 << 10 // what may wait to be sent, but for one long message
)

// A NetHook stands in for the network in tests: a resolver whose answers
// are judged as any are, and a dialer that reaches, for an address judged
// public, a server of the test on this machine. No configuration sets it.
type NetHook struct {
	Resolver ssrf.Resolver
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)
}

// pluginNet is a plugin's network: its own transport, so that no
// connection opened under one plugin's permit is reused for another's
// request.
type pluginNet struct {
	p         *Plugin
	transport *http.Transport
	client    *http.Client

	mu      sync.Mutex
	proxies map[string]bool // the proxies the configuration chose: dialled as they are
}

// network returns the plugin's network, made at its first use; nil once
// the plugin is released.
func (p *Plugin) network() *pluginNet {
	p.netOnce.Do(func() {
		pn := &pluginNet{p: p, proxies: map[string]bool{}}
		pn.transport = &http.Transport{
			Proxy:                  pn.proxy,
			DialContext:            pn.dial,
			TLSClientConfig:        p.cfg.TLS.Clone(),
			TLSHandshakeTimeout:    fetchTimeout,
			MaxResponseHeaderBytes: maxHeaderBytes,
			IdleConnTimeout:        90 * time.Second,
			MaxIdleConnsPerHost:    4,
		}
		pn.client = &http.Client{
			Transport: pn.transport,
			// No redirection is followed: the plugin gets the 3xx.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		p.net = pn
	})
	return p.net
}

func (pn *pluginNet) close() { pn.transport.CloseIdleConnections() }

// proxy asks the configuration for a proxy, and notes the one chosen.
func (pn *pluginNet) proxy(req *http.Request) (*url.URL, error) {
	choose := pn.p.cfg.Proxy
	if choose == nil {
		return nil, nil
	}
	u, err := choose(req)
	if err != nil || u == nil {
		return u, err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	}
	pn.mu.Lock()
	pn.proxies[net.JoinHostPort(u.Hostname(), port)] = true
	pn.mu.Unlock()
	pn.p.h.Limited(slog.LevelInfo, "through a proxy only the host's name was judged, not its addresses",
		slog.String("host", req.URL.Hostname()), slog.String("proxy", u.Redacted()))
	return u, nil
}

// dial dials for the transport: the configured proxy as it is, anything
// else only to addresses judged by the fences.
func (pn *pluginNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	pn.mu.Lock()
	isProxy := pn.proxies[addr]
	pn.mu.Unlock()
	if isProxy {
		return (&net.Dialer{Timeout: fetchTimeout}).DialContext(ctx, network, addr)
	}
	d := &ssrf.Dialer{Local: func(host, port string) bool { return pn.p.localPermit(ctx, host, port) }}
	if hook := pn.p.cfg.Hook; hook != nil {
		d.Resolver = hook.Resolver
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := d.Resolve(ctx, host, port)
		if err != nil {
			return nil, err
		}
		return hook.Dial(ctx, network, addrs[0].String())
	}
	return d.DialContext(ctx, network, addr)
}

// An account is a server of one of the plugin's accounts.
type account struct{ host, port string }

func (p *Plugin) accounts(ctx context.Context) []account {
	list, err := p.h.Accounts(ctx)
	if err != nil {
		p.h.Say(slog.LevelWarn, "the plugin's accounts cannot be read", slog.String("error", err.Error()))
		return nil
	}
	var out []account
	for _, s := range list {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			p.h.Say(slog.LevelWarn, "an account's server is not an http or https URL; ignored")
			continue
		}
		port := u.Port()
		if port == "" {
			port = defaultPort(u.Scheme)
		}
		out = append(out, account{host: strings.ToLower(u.Hostname()), port: port})
	}
	return out
}

func defaultPort(scheme string) string {
	if scheme == "http" || scheme == "ws" {
		return "80"
	}
	return "443"
}

// declares reports whether permissions.network holds entry.
func (p *Plugin) declares(entry string) bool {
	for _, e := range p.cfg.Network {
		if e == entry {
			return true
		}
	}
	return false
}

// localPermit reports whether host:port may reach the machine or the local
// network: a server of an account ({account}), or the port of the shared
// process (local:shared).
func (p *Plugin) localPermit(ctx context.Context, host, port string) bool {
	host = strings.ToLower(host)
	if p.declares("{account}") {
		for _, a := range p.accounts(ctx) {
			if a.host == host && a.port == port {
				return true
			}
		}
	}
	if p.declares("local:shared") && host == "127.0.0.1" {
		if sp, ok := p.h.SharedPort(); ok && sp == port {
			return true
		}
	}
	return false
}

// judgeURL checks a URL against permissions.network: https to a host of
// it or one of its subdomains; http or https to a server of an account
// ({account}); http to 127.0.0.1 on the shared process's port
// (local:shared). For a WebSocket, wss only. The addresses are judged
// later, when they are dialled.
func (p *Plugin) judgeURL(ctx context.Context, raw string, ws bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, fields.Errorf("url", "not an absolute URL")
	}
	if u.User != nil {
		return nil, errorf(protocol.CodeRefused, "refused: a URL with credentials: send them in a header")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	switch {
	case ws && scheme != "wss":
		return nil, errorf(protocol.CodeRefused, "refused: a WebSocket is wss only, not %s", scheme)
	case !ws && scheme != "https" && scheme != "http":
		return nil, errorf(protocol.CodeRefused, "refused: https only, not %s", scheme)
	}
	if port == "" {
		port = defaultPort(scheme)
	}
	secure := scheme == "https" || scheme == "wss"
	for _, e := range p.cfg.Network {
		switch e {
		case "{account}":
			for _, a := range p.accounts(ctx) {
				if a.host == host && a.port == port {
					return u, nil
				}
			}
		case "local:shared":
			if !ws && scheme == "http" && host == "127.0.0.1" {
				if sp, ok := p.h.SharedPort(); ok && sp == port {
					return u, nil
				}
			}
		default:
			if secure && (host == e || strings.HasSuffix(host, "."+e)) {
				return u, nil
			}
		}
	}
	if !secure {
		return nil, errorf(protocol.CodeRefused, "refused: http only reaches a server of an account ({account}) or the shared process (local:shared); %s is neither", u.Host)
	}
	return nil, errorf(protocol.CodeRefused, "refused: %s is not a host of permissions.network nor one of their subdomains", host)
}

// netError words a request's failure: refused for an address the fences
// refuse, failed for the rest.
func netError(err error, limit time.Duration) error {
	var re *ssrf.RefusedError
	switch {
	case errors.As(err, &re):
		return errorf(protocol.CodeRefused, "refused: %s", strings.TrimPrefix(re.Error(), "ssrf: "))
	case errors.Is(err, ssrf.ErrRefused):
		return errorf(protocol.CodeRefused, "refused: %s", strings.TrimPrefix(err.Error(), "ssrf: "))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return errorf(protocol.CodeFailed, "failed: no answer within %v", limit)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return errorf(protocol.CodeFailed, "failed: %s cannot be resolved", dnsErr.Name)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return errorf(protocol.CodeFailed, "failed: %v", err)
}

// netRequest is the params of net/fetch and net/stream.
type netRequest struct {
	url     string
	method  string
	headers map[string]string
	body    []byte
	sse     bool
}

// The params of net/fetch and net/stream as they are written, decoded by
// name; net/stream's alone have sse.
type (
	netRequestJSON struct {
		URL        string            `json:"url" wire:"required"`
		Method     *string           `json:"method"`
		Headers    map[string]string `json:"headers"`
		Body       json.RawMessage   `json:"body"` // a string, or null for none
		BodyBase64 *string           `json:"bodyBase64"`
	}
	netStreamJSON struct {
		SSE bool `json:"sse"`
	}
)

func parseNetRequest(params []byte, stream bool) (*netRequest, error) {
	var rj netRequestJSON
	var sj netStreamJSON
	err := decodeParams(params, &rj)
	if stream {
		err = errors.Join(err, decodeParams(params, &sj))
	}
	if err != nil {
		return nil, err
	}
	nr := &netRequest{url: rj.URL, method: http.MethodGet, headers: rj.Headers, sse: sj.SSE}
	if rj.Method != nil {
		if !validToken(*rj.Method) {
			return nil, fields.Errorf("method", "not an HTTP method")
		}
		nr.method = *rj.Method
	}
	if err := checkHeaders(rj.Headers); err != nil {
		return nil, err
	}
	var text *string
	if rj.Body != nil && string(rj.Body) != "null" {
		s, err := fields.String(rj.Body)
		if err != nil {
			return nil, fields.Under("body", err)
		}
		text = &s
	}
	switch b64 := rj.BodyBase64; {
	case text != nil && b64 != nil:
		return nil, fields.Errorf("bodyBase64", "body or bodyBase64, not both")
	case text != nil:
		nr.body = []byte(*text)
	case b64 != nil:
		if nr.body, err = base64.StdEncoding.Strict().DecodeString(*b64); err != nil {
			return nil, fields.Errorf("bodyBase64", "not base64")
		}
	}
	return nr, nil
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// newRequest makes the HTTP request nr asks for, once its URL is judged.
func (p *Plugin) newRequest(ctx context.Context, nr *netRequest, u *url.URL) (*http.Request, error) {
	var body io.Reader
	if nr.body != nil {
		body = bytes.NewReader(nr.body)
	}
	req, err := http.NewRequestWithContext(ctx, nr.method, u.String(), body)
	if err != nil {
		return nil, fields.Errorf("url", "%v", err)
	}
	for k, v := range nr.headers {
		if strings.EqualFold(k, "Host") {
			continue // Host is the Host's to set
		}
		req.Header.Set(k, v)
	}
	return req, nil
}

// fetchLimits are net/fetch's time and size for the plugin.
func (p *Plugin) fetchLimits() (time.Duration, int64) {
	t, n := fetchTimeout, int64(fetchBytes)
	if p.cfg.Limits.FetchMs > 0 {
		t = time.Duration(p.cfg.Limits.FetchMs) * time.Millisecond
	}
	if p.cfg.Limits.FetchBytes > 0 {
		n = p.cfg.Limits.FetchBytes
	}
	return t, n
}

// responseHeaders gives an answer's headers by lower case name, a repeated
// one joined by ", ".
func responseHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		out[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return out
}

// netFetchResult is the answer to net/fetch: Body when the body is UTF-8,
// BodyBase64 otherwise.
type netFetchResult struct {
	Status     int               `json:"status"`
	Headers    map[string]string `json:"headers"`
	Body       *string           `json:"body,omitempty"`
	BodyBase64 *string           `json:"bodyBase64,omitempty"`
}

// judgedRequest reads the params of a net/fetch (or, with stream, a
// net/stream), judges its URL, and returns it with the network it goes
// out on, or the error to answer.
func (p *Plugin) judgedRequest(ctx context.Context, params []byte, stream bool) (*netRequest, *url.URL, *pluginNet, error) {
	nr, err := parseNetRequest(params, stream)
	if err != nil {
		return nil, nil, nil, err
	}
	u, err := p.judgeURL(ctx, nr.url, false)
	if err != nil {
		return nil, nil, nil, err
	}
	pn := p.network()
	if pn == nil {
		return nil, nil, nil, errorf(protocol.CodeFailed, "failed: the plugin is stopping")
	}
	return nr, u, pn, nil
}

func netFetch(ctx context.Context, r *Instance, _ Call, params []byte) (any, error) {
	p := r.p
	nr, u, pn, err := p.judgedRequest(ctx, params, false)
	if err != nil {
		return nil, err
	}
	limit, maxBytes := p.fetchLimits()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := p.newRequest(ctx, nr, u)
	if err != nil {
		return nil, err
	}
	resp, err := pn.client.Do(req)
	if err != nil {
		return nil, netError(err, limit)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err == nil && ctx.Err() != nil {
		// A read cancelled at the deadline may end with no error: the body
		// is then cut, and the answer is a failure, never a success.
		err = ctx.Err()
	}
	if err != nil {
		return nil, netError(err, limit)
	}
	if int64(len(data)) > maxBytes {
		return nil, errorf(protocol.CodeFailed, "failed: the answer is over %d bytes", maxBytes)
	}
	if req.Method != http.MethodHead && resp.ContentLength >= 0 && int64(len(data)) != resp.ContentLength {
		return nil, errorf(protocol.CodeFailed, "failed: the answer was cut: %d bytes of %d", len(data), resp.ContentLength)
	}
	res := netFetchResult{Status: resp.StatusCode, Headers: responseHeaders(resp.Header)}
	if text, b64, ok := textOrBase64(data); ok {
		res.Body = &text
	} else {
		res.BodyBase64 = &b64
	}
	return res, nil
}
