package escouade_test

// The fence_*_test.go files test the fences (escouade/internal/fence)
// through the Host, as a plugin meets them on the wire: a request line
// in, an answer or an error code out, with the Host's journal and
// limits. The fence package's own tests check its parts alone.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

// wasmPlugin is the module built from testdata/wasmplugin by TestMain.
var wasmPlugin []byte

// buildWASMPlugin builds the Go plugin of testdata/wasmplugin for wasip1,
// into dir.
func buildWASMPlugin(dir string) error {
	// The go command that runs these tests put its folder first on PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "plugin.wasm")
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", out, "./testdata/wasmplugin")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, b)
	}
	wasmPlugin, err = os.ReadFile(out)
	return err
}

// The addresses the tests' names resolve to: public ones (documentation
// ranges, reached only through the dial hook) and the local ones the
// fences refuse.
var (
	apiAddr  = netip.MustParseAddr("203.0.113.10")
	api6Addr = netip.MustParseAddr("2001:db8::10")
	lanAddr  = netip.MustParseAddr("192.168.1.20")
)

// A netFixture is the network of the in-process plugins' tests: a TLS
// server (api.example.com) and a plain one (a server of an account on the
// local network), a resolver of test names, and the dial hook that reaches
// them: nothing leaves this machine.
type netFixture struct {
	tls   *httptest.Server
	plain *httptest.Server
	pool  *x509.CertPool

	mu      sync.Mutex
	names   map[string][][]netip.Addr
	lookups map[string]int
	dialed  []string

	split chan struct{} // /split waits on it between the bytes of a character
	done  chan struct{} // closed when the test ends
}

func newNetFixture(t testing.TB) *netFixture {
	t.Helper()
	f := &netFixture{names: map[string][][]netip.Addr{}, lookups: map[string]int{}, split: make(chan struct{}), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("X-Many", "a")
		w.Header().Add("X-Many", "b")
		fmt.Fprintf(w, "hello %s", r.Header.Get("X-Test"))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprintf(w, "%s %s ", r.Method, r.Host)
		w.Write(b)
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte{0, 0xff, 0xfe}) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://127.0.0.1/hello", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("b", 2<<20)))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-f.done // never answers while the test runs
	})
	mux.HandleFunc("/halfway", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("the first half, "))
		w.(http.Flusher).Flush()
		<-f.done // the rest never comes while the test runs
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		for _, s := range []string{"one ", "two ", "three "} {
			io.WriteString(w, s)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/flood", func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("f", 16<<10))
		for range 64 { // 1 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/split", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("a\xc3"))
		w.(http.Flusher).Flush()
		select {
		case <-f.split:
		case <-r.Context().Done():
			return
		}
		w.Write([]byte("\xa9b"))
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(4 << 20)
		for {
			typ, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			switch string(data) {
			case "big":
				c.Write(r.Context(), websocket.MessageText, []byte(strings.Repeat("x", 2<<20)))
				continue
			case "break":
				c.CloseNow()
				return
			case "mute":
				<-f.done // reads nothing more
				return
			}
			if typ == websocket.MessageText {
				data = append(data, " polo"...)
			}
			c.Write(r.Context(), typ, data)
		}
	})
	f.tls = httptest.NewUnstartedServer(mux)
	f.tls.EnableHTTP2 = false
	// Every request dials anew, so that every request is judged anew.
	f.tls.Config.SetKeepAlivesEnabled(false)
	f.tls.StartTLS()
	f.pool = x509.NewCertPool()
	f.pool.AddCert(f.tls.Certificate())
	f.plain = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "account %s %s", r.Host, r.URL.Path)
	}))
	f.plain.Config.SetKeepAlivesEnabled(false)
	t.Cleanup(func() {
		close(f.done)
		f.tls.CloseClientConnections()
		f.tls.Close()
		f.plain.Close()
	})
	f.resolve("api.example.com", []netip.Addr{apiAddr, api6Addr})
	f.resolve("nas.lan", []netip.Addr{lanAddr})
	return f
}

// resolve sets what name resolves to; several answers alternate.
func (f *netFixture) resolve(name string, answers ...[]netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names[name] = answers
}

// LookupNetIP implements ssrf.Resolver.
func (f *netFixture) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	as, ok := f.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := f.lookups[host]
	f.lookups[host]++
	return as[n%len(as)], nil
}

// dial reaches the test's servers for the addresses judged: the public
// test addresses and the account's server; loopback only when the fences
// permitted it (local:shared). Anything else is an error, never a dial.
func (f *netFixture) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dialed = append(f.dialed, addr)
	f.mu.Unlock()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, err
	}
	var to string
	switch {
	case ap.Addr() == apiAddr || ap.Addr() == api6Addr:
		to = f.tls.Listener.Addr().String()
	case ap.Addr() == lanAddr && ap.Port() == 8080:
		to = f.plain.Listener.Addr().String()
	case ap.Addr().IsLoopback():
		to = addr
	default:
		return nil, fmt.Errorf("test: no server at %s", addr)
	}
	return (&net.Dialer{}).DialContext(ctx, network, to)
}

// dials returns the addresses dialled so far, and forgets them.
func (f *netFixture) dials() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.dialed
	f.dialed = nil
	return d
}

// options sets up o for the fixture: its roots of trust.
func (f *netFixture) options(o *escouade.Options) {
	o.Network = &escouade.NetworkOptions{TLS: &tls.Config{RootCAs: f.pool}}
}

// hook makes h reach the fixture.
func (f *netFixture) hook(h *escouade.Host) { escouade.SetNetHook(h, f, f.dial) }

// A note is a notification a test plugin received.
type note struct {
	method string
	params map[string]any
}

// A linePlugin is a plugin in Go, run in-process with a manifest of
// run.js, that calls the Host by lines as a script would: what the fence
// tests drive.
type linePlugin struct {
	p     *escouade.Plugin
	mu    sync.Mutex
	conn  *jsonrpc.Conn
	notes chan note
	hold  atomic.Bool   // reads of the Host's lines wait while it is set
	free  chan struct{} // closed to let a held reader go
}

// startLinePlugin starts a linePlugin with the manifest's fields beyond
// id, version, protocolVersion and run, in h, checking every line the Host
// writes against the schema.
func startLinePlugin(t testing.TB, h *escouade.Host, v *validator, id, fields, dir string) *linePlugin {
	t.Helper()
	m, err := manifest.Parse([]byte(fmt.Sprintf(`{"id":%q,"version":"1.0.0","protocolVersion":1,"run":{"js":"main.js"}%s}`, id, fields)))
	if err != nil {
		t.Fatal(err)
	}
	lp := &linePlugin{notes: make(chan note, 1<<16), free: make(chan struct{})}
	run := func(ctx context.Context, in io.Reader, out io.Writer) error {
		c := jsonrpc.NewConn(&heldReader{lp: lp, r: in}, out, jsonrpc.HandlerFunc(lp.handle), &jsonrpc.Options{MaxLine: 64 << 20, Backlog: 1 << 16})
		lp.mu.Lock()
		lp.conn = c
		lp.mu.Unlock()
		return c.Run(ctx)
	}
	if v != nil {
		run = v.wrap(run)
	}
	lp.p, err = h.StartFunc(context.Background(), m, dir, run)
	if err != nil {
		t.Fatal(err)
	}
	return lp
}

func (lp *linePlugin) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "initialize":
		return json.RawMessage(`{"protocolVersion":1,"capabilities":{}}`), nil
	case "shutdown":
		return json.RawMessage("null"), nil
	}
	if req.Notification() {
		var params map[string]any
		json.Unmarshal(req.Params, &params)
		lp.notes <- note{method: req.Method, params: params}
		return nil, nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no")
}

// call calls the Host and decodes the result into result (nil: dropped).
func (lp *linePlugin) call(method string, params, result any) error {
	lp.mu.Lock()
	c := lp.conn
	lp.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if result != nil {
		return json.Unmarshal(raw, result)
	}
	return nil
}

func (lp *linePlugin) notify(method string, params any) {
	lp.mu.Lock()
	c := lp.conn
	lp.mu.Unlock()
	c.Notify(method, params)
}

// next returns the next notification of method ("" for any) for which
// match (nil for any) holds; the others are dropped.
func (lp *linePlugin) next(t testing.TB, method string, match func(note) bool) note {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case n := <-lp.notes:
			if (method == "" || n.method == method) && (match == nil || match(n)) {
				return n
			}
		case <-deadline:
			t.Fatalf("no %s came", method)
		}
	}
}

// heldReader is the plugin's input, which a test may stop reading.
type heldReader struct {
	lp *linePlugin
	r  io.Reader
}

func (h *heldReader) Read(b []byte) (int, error) {
	if h.lp.hold.Load() {
		<-h.lp.free
	}
	return h.r.Read(b)
}

// codeOf returns the code of a call's error answer, or 0.
func codeOf(err error) protocol.Code {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return protocol.Code(e.Code)
	}
	return 0
}

// wantCode fails when err is not an answer with code.
func wantCode(t testing.TB, what string, err error, code protocol.Code) {
	t.Helper()
	if got := codeOf(err); got != code {
		t.Errorf("%s: %v (%s), want %s", what, err, got, code)
	}
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// hookedHost returns a Host for in-process plugins, its network the
// fixture's, every line checked against the schema.
func hookedHost(t testing.TB, f *netFixture, v *validator, opts *escouade.Options) (*escouade.Host, *journal) {
	t.Helper()
	var o escouade.Options
	if opts != nil {
		o = *opts
	}
	if f != nil {
		f.options(&o)
	}
	if o.WASMCacheDir == "" {
		o.WASMCacheDir = wasmCache(t)
	}
	h, j := newHost(t, &o)
	if f != nil {
		f.hook(h)
	}
	if v != nil {
		v.hookHost(h)
	}
	return h, j
}

// wasmCache is a compilation cache shared by the tests of the run: the
// test module is compiled once.
func wasmCache(testing.TB) string { return filepath.Join(testTemp, "wasm-cache") }
