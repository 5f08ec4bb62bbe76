package escouade_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/protocol"
)

type fetchResult struct {
	Status     int
	Headers    map[string]string
	Body       *string
	BodyBase64 *string
}

// TestFetchSSRF is the table of net/fetch's fences: every class of address
// a name may resolve to that is refused, judged on the resolved addresses
// and never dialled; a name that rebinds; redirects; the size and time
// caps; the permissions of the manifest.
func TestFetchSSRF(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, j := hookedHost(t, f, nil, nil)
	lp := startLinePlugin(t, h, v, "ssrf", `,"permissions":{"network":["example.com"]},"limits":{"fetchMs":300}`, "")
	big := startLinePlugin(t, h, v, "big", `,"permissions":{"network":["example.com"]},"limits":{"fetchBytes":4194304}`, "")

	denied := map[string]string{
		"loopback":            "127.0.0.1",
		"loopback, elsewhere": "127.8.9.10",
		"loopback v6":         "::1",
		"private 10":          "10.0.0.1",
		"private 172":         "172.16.5.5",
		"private 192":         "192.168.1.1",
		"private v6":          "fd00::1",
		"link-local":          "169.254.1.1",
		"link-local v6":       "fe80::1",
		"CGNAT":               "100.64.1.1",
		"IPv4-mapped":         "::ffff:127.0.0.1",
		"IPv4-mapped public":  "::ffff:8.8.8.8",
		"NAT64":               "64:ff9b::a00:1",
		"6to4":                "2002:a00:1::1",
		"Teredo":              "2001:0:4136:e378:8000:63bf:3fff:fdd2",
		"unspecified":         "0.0.0.0",
		"unspecified v6":      "::",
		"multicast":           "224.0.0.1",
		"multicast v6":        "ff02::1",
		"broadcast":           "255.255.255.255",
		"metadata":            "169.254.169.254",
		"metadata v6":         "fd00:ec2::254",
		"metadata alibaba":    "100.100.100.200",
	}
	i := 0
	for name, addr := range denied {
		i++
		host := fmt.Sprintf("d%d.example.com", i)
		f.resolve(host, []netip.Addr{netip.MustParseAddr(addr)})
		err := lp.call("net/fetch", map[string]any{"url": "https://" + host + "/hello"}, nil)
		wantCode(t, name+" ("+addr+")", err, protocol.CodeRefused)
		if d := f.dials(); len(d) > 0 {
			t.Errorf("%s: dialled %v", name, d)
		}
	}
	// One refused address among public ones refuses the name.
	f.resolve("mixed.example.com", []netip.Addr{apiAddr, netip.MustParseAddr("10.1.1.1")})
	wantCode(t, "a public and a private answer", lp.call("net/fetch", map[string]any{"url": "https://mixed.example.com/hello"}, nil), protocol.CodeRefused)

	// DNS rebinding: public, then private, then public again.
	f.resolve("rebind.example.com", []netip.Addr{apiAddr}, []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	for i, want := range []protocol.Code{0, protocol.CodeRefused, 0, protocol.CodeRefused} {
		var r fetchResult
		err := lp.call("net/fetch", map[string]any{"url": "https://rebind.example.com/hello"}, &r)
		if want == 0 && (err != nil || r.Status != 200) {
			t.Errorf("rebind %d: %v %v", i, r.Status, err)
		} else if want != 0 {
			wantCode(t, fmt.Sprintf("rebind %d", i), err, want)
		}
	}
	for _, d := range f.dials() {
		if !strings.HasPrefix(d, apiAddr.String()) && !strings.HasPrefix(d, "["+api6Addr.String()) {
			t.Errorf("dialled %s", d)
		}
	}

	// The manifest's fences.
	for name, u := range map[string]string{
		"http":                  "http://api.example.com/hello",
		"a host not declared":   "https://example.org/hello",
		"a suffix, not a label": "https://notexample.com/hello",
		"an address":            "https://203.0.113.10/hello",
		"another scheme":        "ftp://api.example.com/x",
		"credentials":           "https://user:pass@api.example.com/hello",
	} {
		wantCode(t, name, lp.call("net/fetch", map[string]any{"url": u}, nil), protocol.CodeRefused)
	}
	wantCode(t, "not a URL", lp.call("net/fetch", map[string]any{"url": "::"}, nil), protocol.CodeInvalidParams)
	wantCode(t, "body and bodyBase64", lp.call("net/fetch", map[string]any{"url": "https://api.example.com/echo", "body": "a", "bodyBase64": "YQ=="}, nil), protocol.CodeInvalidParams)
	wantCode(t, "a header that is no header", lp.call("net/fetch", map[string]any{"url": "https://api.example.com/hello", "headers": map[string]string{"Bad Name": "x"}}, nil), protocol.CodeInvalidParams)

	// What comes back.
	var r fetchResult
	if err := lp.call("net/fetch", map[string]any{"url": "https://api.example.com/redirect"}, &r); err != nil || r.Status != 302 || !strings.Contains(r.Headers["location"], "127.0.0.1") {
		t.Errorf("redirect: %+v %v", r, err)
	}
	r = fetchResult{}
	if err := lp.call("net/fetch", map[string]any{"url": "https://api.example.com/hello", "headers": map[string]string{"X-Test": "t", "Host": "evil.example"}}, &r); err != nil || *r.Body != "hello t" || r.Headers["x-many"] != "a, b" {
		t.Errorf("hello: %+v %v", r, err)
	}
	r = fetchResult{}
	if err := lp.call("net/fetch", map[string]any{"url": "https://api.example.com/echo", "method": "PUT", "bodyBase64": "//4="}, &r); err != nil || r.BodyBase64 == nil || *r.BodyBase64 != "UFVUIGFwaS5leGFtcGxlLmNvbSD//g==" {
		t.Errorf("echo bytes: %+v %v", r, err)
	}
	r = fetchResult{}
	if err := lp.call("net/fetch", map[string]any{"url": "https://api.example.com/echo", "method": "POST", "body": "hi", "headers": map[string]string{"Host": "evil.example"}}, &r); err != nil || *r.Body != "POST api.example.com hi" {
		t.Errorf("Host is the Host's: %+v %v", r, err)
	}

	// The caps: 1 MiB, or limits.fetchBytes; limits.fetchMs.
	wantCode(t, "an answer over 1 MiB", lp.call("net/fetch", map[string]any{"url": "https://api.example.com/big"}, nil), protocol.CodeFailed)
	if err := big.call("net/fetch", map[string]any{"url": "https://api.example.com/big"}, &r); err != nil || len(*r.Body) != 2<<20 {
		t.Errorf("within limits.fetchBytes: %v", err)
	}
	start := time.Now()
	wantCode(t, "past limits.fetchMs", lp.call("net/fetch", map[string]any{"url": "https://api.example.com/slow"}, nil), protocol.CodeFailed)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a fetch of 300 ms at most took %v", d)
	}
	if len(j.find("ssrf", "proxy")) > 0 {
		t.Error("the journal speaks of a proxy that is not there")
	}
	v.need(t, "result:net/fetch", "error:refused", "error:failed", "error:invalidParams")
}

// TestFetchAccount checks {account}: the host and port the user typed for
// one of the plugin's accounts, in http, on the local network; that host
// and port alone.
func TestFetchAccount(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, _ := hookedHost(t, f, nil, &escouade.Options{Accounts: escouade.AccountMap{
		"acct":   {"http://192.168.1.20:8080", "http://nas.lan:8080"},
		"noacct": {"http://192.168.1.20:8080"},
	}})
	lp := startLinePlugin(t, h, v, "acct", `,"permissions":{"network":["{account}"]}`, "")
	no := startLinePlugin(t, h, v, "noacct", `,"permissions":{"network":["example.com"]}`, "")
	var r fetchResult
	if err := lp.call("net/fetch", map[string]any{"url": "http://192.168.1.20:8080/x"}, &r); err != nil || *r.Body != "account 192.168.1.20:8080 /x" {
		t.Errorf("the account's server: %+v %v", r, err)
	}
	if err := lp.call("net/fetch", map[string]any{"url": "http://nas.lan:8080/y"}, &r); err != nil || *r.Body != "account nas.lan:8080 /y" {
		t.Errorf("the account's server by name: %+v %v", r, err)
	}
	wantCode(t, "another port", lp.call("net/fetch", map[string]any{"url": "http://192.168.1.20:8081/x"}, nil), protocol.CodeRefused)
	wantCode(t, "another host", lp.call("net/fetch", map[string]any{"url": "http://192.168.1.21:8080/x"}, nil), protocol.CodeRefused)
	wantCode(t, "the default port", lp.call("net/fetch", map[string]any{"url": "http://192.168.1.20/x"}, nil), protocol.CodeRefused)
	wantCode(t, "no {account} in the manifest", no.call("net/fetch", map[string]any{"url": "http://192.168.1.20:8080/x"}, nil), protocol.CodeRefused)
	// The permit opens the machine and the network, never what no service
	// lives at.
	f.resolve("nas.lan", []netip.Addr{netip.MustParseAddr("169.254.169.254")})
	wantCode(t, "an account's name that resolves to the metadata service", lp.call("net/fetch", map[string]any{"url": "http://nas.lan:8080/y"}, nil), protocol.CodeRefused)
}

// TestFetchShared checks local:shared with a launch process that prints
// its port: http to 127.0.0.1 on that port, while it lives. No hook: the
// production dialer reaches the machine through the permit alone.
func TestFetchShared(t *testing.T) {
	v := newValidator(t)
	h, j := hookedHost(t, nil, nil, &escouade.Options{Accounts: escouade.AccountMap{"shared": {"http://169.254.169.254"}}})
	exe, _ := os.Executable()
	launch := fmt.Sprintf(`,"permissions":{"network":["local:shared","{account}","example.com"]},"launch":{"shared":{"command":[%q,%q,"shared-server"],"listens":"listening on 127\\.0\\.0\\.1:([0-9]+)"}}`, exe, pluginArg)
	lp := startLinePlugin(t, h, v, "shared", launch, "")
	e := j.wait(t, "shared", "launch.shared: listening")
	port := e.attrs["port"]
	var r fetchResult
	if err := lp.call("net/fetch", map[string]any{"url": "http://127.0.0.1:" + port + "/p"}, &r); err != nil || *r.Body != "shared /p" {
		t.Fatalf("the shared process: %+v %v", r, err)
	}
	wantCode(t, "another port", lp.call("net/fetch", map[string]any{"url": "http://127.0.0.1:1/p"}, nil), protocol.CodeRefused)
	wantCode(t, "localhost", lp.call("net/fetch", map[string]any{"url": "http://localhost:" + port + "/p"}, nil), protocol.CodeRefused)
	wantCode(t, "https", lp.call("net/fetch", map[string]any{"url": "https://127.0.0.1:" + port + "/p"}, nil), protocol.CodeRefused)
	// The production dialer refuses what no permit opens, even an
	// account's server.
	wantCode(t, "an account at the metadata address", lp.call("net/fetch", map[string]any{"url": "http://169.254.169.254/latest"}, nil), protocol.CodeRefused)

	// Once it ends, its port is closed.
	pid := atoi(j.wait(t, "shared", "launch.shared: process started").attrs["pid"])
	syscall.Kill(pid, syscall.SIGKILL)
	j.wait(t, "shared", "launch.shared: the process ended")
	wantCode(t, "after its end", lp.call("net/fetch", map[string]any{"url": "http://127.0.0.1:" + port + "/p"}, nil), protocol.CodeRefused)
}

// TestFetchProxy checks that a configured proxy is followed, that only the
// name is judged then, and that the journal says so.
func TestFetchProxy(t *testing.T) {
	f := newNetFixture(t)
	var mu sync.Mutex
	var targets []string
	proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		targets = append(targets, r.Host)
		mu.Unlock()
		up, err := net.Dial("tcp", f.tls.Listener.Addr().String())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			up.Close()
			return
		}
		go func() { io.Copy(up, buf); up.Close() }()
		io.Copy(c, up)
		c.Close()
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go proxy.Serve(ln)
	t.Cleanup(func() { proxy.Close() })
	proxyURL, _ := url.Parse("http://" + ln.Addr().String())

	var o escouade.Options
	f.options(&o)
	o.Network.Proxy = http.ProxyURL(proxyURL)
	h, j := newHost(t, &o) // no hook: the proxy is dialled as it is
	lp := startLinePlugin(t, h, nil, "proxied", `,"permissions":{"network":["example.com"]}`, "")
	var r fetchResult
	if err := lp.call("net/fetch", map[string]any{"url": "https://api.example.com/hello"}, &r); err != nil || r.Status != 200 {
		t.Fatalf("through the proxy: %+v %v", r, err)
	}
	mu.Lock()
	if len(targets) != 1 || targets[0] != "api.example.com:443" {
		t.Errorf("the proxy was asked for %v", targets)
	}
	mu.Unlock()
	e := j.wait(t, "proxied", "through a proxy only the host's name was judged")
	if e.attrs["host"] != "api.example.com" {
		t.Errorf("journal: %v", e)
	}
	wantCode(t, "a host not declared, through the proxy", lp.call("net/fetch", map[string]any{"url": "https://example.org/"}, nil), protocol.CodeRefused)
}

type streamNotes struct {
	chunks []string
	end    *note
}

// readStream gathers the pieces of stream id until its end, crediting
// each one at once.
func readStream(t *testing.T, lp *linePlugin, id int64, credit bool) streamNotes {
	t.Helper()
	var s streamNotes
	for {
		n := lp.next(t, "", func(n note) bool {
			return (n.method == "net/chunk" || n.method == "net/end") && num(n.params["stream"]) == id
		})
		if n.method == "net/end" {
			s.end = &n
			return s
		}
		d, _ := n.params["data"].(string)
		s.chunks = append(s.chunks, d)
		if credit {
			lp.notify("net/credit", map[string]any{"stream": id, "bytes": len(d)})
		}
	}
}

// TestStreams checks net/stream: the credit window, text cut between
// characters, the 120 s without a byte (shortened) unless sse, no net/end
// after net/cancel, 8 at once.
func TestStreams(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, _ := hookedHost(t, f, nil, nil)
	escouade.SetStreamIdle(h, 300*time.Millisecond)
	lp := startLinePlugin(t, h, v, "streams", `,"permissions":{"network":["example.com"]}`, "")
	var r struct {
		Stream  int64
		Status  int
		Headers map[string]string
	}
	open := func(path string, sse bool) int64 {
		t.Helper()
		if err := lp.call("net/stream", map[string]any{"url": "https://api.example.com" + path, "sse": sse}, &r); err != nil {
			t.Fatalf("stream %s: %v", path, err)
		}
		return r.Stream
	}

	// The window: 256 KiB sent and not credited, never more; credits are
	// given only when the window is full, so the stream moves only if the
	// Host fills it to the byte.
	id := open("/flood", false)
	uncredited, total := 0, 0
	for {
		n := lp.next(t, "", func(n note) bool { return num(n.params["stream"]) == id })
		if n.method == "net/end" {
			if e, ok := n.params["error"]; ok {
				t.Errorf("flood ended with %v", e)
			}
			break
		}
		d := len(n.params["data"].(string))
		uncredited += d
		total += d
		if uncredited > 256<<10 {
			t.Fatalf("%d bytes sent without credit", uncredited)
		}
		if uncredited == 256<<10 {
			lp.notify("net/credit", map[string]any{"stream": id, "bytes": uncredited})
			uncredited = 0
		}
	}
	if total != 1<<20 {
		t.Errorf("flood gave %d bytes", total)
	}

	// A character cut between two reads waits for the next piece.
	id = open("/split", false)
	first := lp.next(t, "net/chunk", func(n note) bool { return num(n.params["stream"]) == id })
	close(f.split)
	rest := readStream(t, lp, id, true)
	if first.params["data"] != "a" || strings.Join(rest.chunks, "") != "éb" {
		t.Errorf("split: %q then %q", first.params["data"], rest.chunks)
	}

	// Silence ends a stream that is not sse; an sse stream opened before it
	// is still open when it ends.
	sse := open("/silent", true)
	quiet := open("/silent", false)
	got := map[int64][]string{}
	for {
		n := lp.next(t, "", func(n note) bool { return num(n.params["stream"]) == sse || num(n.params["stream"]) == quiet })
		id := num(n.params["stream"])
		if n.method == "net/end" {
			if id != quiet || !strings.Contains(fmt.Sprint(n.params["error"]), "no byte for 300ms") {
				t.Errorf("stream %d ended first: %v", id, n.params)
			}
			break
		}
		got[id] = append(got[id], n.params["data"].(string))
	}
	// No net/end after net/cancel: the cancelled stream's end would come
	// before the end of a stream read after it.
	lp.notify("net/cancel", map[string]any{"stream": sse})
	after := open("/stream", false)
	for {
		n := lp.next(t, "", func(n note) bool { return n.method == "net/end" })
		if num(n.params["stream"]) == sse {
			t.Error("net/end after net/cancel")
		}
		if num(n.params["stream"]) == after {
			break
		}
	}

	// 8 at once.
	var ids []int64
	for range 8 {
		ids = append(ids, open("/silent", true))
	}
	wantCode(t, "a ninth stream", lp.call("net/stream", map[string]any{"url": "https://api.example.com/silent"}, nil), protocol.CodeRefused)
	for _, id := range ids {
		lp.notify("net/cancel", map[string]any{"stream": id})
	}
	wantCode(t, "a stream to a host not declared", lp.call("net/stream", map[string]any{"url": "https://example.org/"}, nil), protocol.CodeRefused)
	v.need(t, "result:net/stream", "net/chunk", "net/end", "error:refused")
}

// TestWebSockets checks ws/*: wss only, 4 at once, 1 MiB a message either
// way (1009), 256 KiB waiting to be sent, 1006 for a connection that broke,
// and headers never in the journal.
func TestWebSockets(t *testing.T) {
	f := newNetFixture(t)
	v := newValidator(t)
	h, j := hookedHost(t, f, nil, nil)
	lp := startLinePlugin(t, h, v, "ws", `,"permissions":{"network":["example.com"]}`, "")
	var r struct{ Socket int64 }
	open := func() int64 {
		t.Helper()
		if err := lp.call("ws/open", map[string]any{"url": "wss://api.example.com/ws", "headers": map[string]string{"Authorization": "Bearer hush-hush"}}, &r); err != nil {
			t.Fatalf("ws/open: %v", err)
		}
		return r.Socket
	}
	closed := func(id int64) map[string]any {
		t.Helper()
		return lp.next(t, "ws/closed", func(n note) bool { return num(n.params["socket"]) == id }).params
	}
	wantCode(t, "ws://", lp.call("ws/open", map[string]any{"url": "ws://api.example.com/ws"}, nil), protocol.CodeRefused)
	wantCode(t, "https://", lp.call("ws/open", map[string]any{"url": "https://api.example.com/ws"}, nil), protocol.CodeRefused)
	wantCode(t, "a host not declared", lp.call("ws/open", map[string]any{"url": "wss://example.org/ws"}, nil), protocol.CodeRefused)
	f.resolve("local.example.com", []netip.Addr{netip.MustParseAddr("10.0.0.7")})
	wantCode(t, "a name of the local network", lp.call("ws/open", map[string]any{"url": "wss://local.example.com/ws"}, nil), protocol.CodeRefused)
	wantCode(t, "not a WebSocket", lp.call("ws/open", map[string]any{"url": "wss://api.example.com/hello"}, nil), protocol.CodeFailed)

	var ids []int64
	for range 4 {
		ids = append(ids, open())
	}
	wantCode(t, "a fifth socket", lp.call("ws/open", map[string]any{"url": "wss://api.example.com/ws"}, nil), protocol.CodeRefused)

	// A message over 1 MiB, sent: refused; received: 1009.
	wantCode(t, "a message over 1 MiB", lp.call("ws/send", map[string]any{"socket": ids[0], "text": strings.Repeat("m", 1<<20+1)}, nil), protocol.CodeRefused)
	if err := lp.call("ws/send", map[string]any{"socket": ids[0], "text": "big"}, nil); err != nil {
		t.Fatal(err)
	}
	if c := closed(ids[0]); c["code"] != 1009.0 {
		t.Errorf("a message over 1 MiB received: %v", c)
	}
	// A connection that breaks: 1006.
	if err := lp.call("ws/send", map[string]any{"socket": ids[1], "text": "break"}, nil); err != nil {
		t.Fatal(err)
	}
	if c := closed(ids[1]); c["code"] != 1006.0 {
		t.Errorf("a broken connection: %v", c)
	}
	wantCode(t, "a send on a closed socket", lp.call("ws/send", map[string]any{"socket": ids[1], "text": "x"}, nil), protocol.CodeRefused)
	// A peer that reads nothing: past 256 KiB waiting, refused; a long
	// message goes when nothing waits.
	if err := lp.call("ws/send", map[string]any{"socket": ids[2], "text": "mute"}, nil); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("w", 200<<10)
	refused := false
	for i := 0; i < 400 && !refused; i++ {
		err := lp.call("ws/send", map[string]any{"socket": ids[2], "text": chunk}, nil)
		switch codeOf(err) {
		case 0:
		case protocol.CodeRefused:
			refused = true
		default:
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if !refused {
		t.Error("a peer that reads nothing never filled the 256 KiB")
	}
	// ws/close, and ws/closed 1000.
	if err := lp.call("ws/close", map[string]any{"socket": ids[3]}, nil); err != nil {
		t.Fatal(err)
	}
	if c := closed(ids[3]); c["code"] != 1000.0 {
		t.Errorf("closed: %v", c)
	}
	wantCode(t, "closing a socket that is closed", lp.call("ws/close", map[string]any{"socket": ids[3]}, nil), protocol.CodeRefused)
	if strings.Contains(j.dump(), "hush-hush") {
		t.Error("a header went to the journal")
	}
	v.need(t, "result:ws/open", "result:ws/send", "result:ws/close", "ws/closed", "error:refused", "error:failed")
}
