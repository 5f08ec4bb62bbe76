package schematest

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
)

// A Proxy sits between a client and an ACI runtime, forwards every message
// both ways unchanged, and validates every message the runtime sends
// against the schema: text messages against the top-level schema, binary
// frames' headers against BinaryFrameHeader or BinaryExecOutputHeader.
type Proxy struct {
	URL string // ws:// URL clients dial instead of the runtime's

	t        testing.TB
	target   string
	upstream *http.Client
	srv      *httptest.Server
	wg       sync.WaitGroup
	text     atomic.Int64
	binary   atomic.Int64
	invalid  atomic.Int64
}

// NewProxy starts a validating proxy in front of target (a ws:// URL) and
// stops it when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	return NewProxyVia(t, target, nil)
}

// ProxyURL starts a validating proxy in front of target, as NewProxy does,
// and returns its URL: the shape of shinkentest.Options.Proxy.
func ProxyURL(t testing.TB, target string) string { return NewProxy(t, target).URL }

// NewProxyVia is NewProxy for a runtime reached through upstream, whose
// transport dials the runtime's socket (a unix or vsock listener); the
// host in target is then only a name. nil means http.DefaultClient.
func NewProxyVia(t testing.TB, target string, upstream *http.Client) *Proxy {
	p := &Proxy{t: t, target: target, upstream: upstream}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = "ws" + strings.TrimPrefix(p.srv.URL, "http")
	t.Cleanup(func() {
		p.srv.Close()
		p.wg.Wait()
	})
	return p
}

// Counts returns how many text and binary messages the runtime sent.
func (p *Proxy) Counts() (text, binary int64) { return p.text.Load(), p.binary.Load() }

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	down, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	down.SetReadLimit(-1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up, _, err := websocket.Dial(ctx, p.target+r.URL.Path, &websocket.DialOptions{HTTPClient: p.upstream})
	if err != nil {
		down.Close(websocket.StatusInternalError, "proxy: dial runtime failed")
		return
	}
	up.SetReadLimit(-1)
	done := make(chan struct{}, 2)
	pump := func(from, to *websocket.Conn, check bool) {
		defer func() { done <- struct{}{} }()
		for {
			typ, data, err := from.Read(ctx)
			if err != nil {
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					to.Close(ce.Code, ce.Reason)
				} else {
					to.CloseNow()
				}
				return
			}
			if check {
				p.check(typ, data)
			}
			if err := to.Write(ctx, typ, data); err != nil {
				from.CloseNow()
				return
			}
		}
	}
	go pump(down, up, false)
	go pump(up, down, true)
	<-done
	cancel()
	<-done
	up.CloseNow()
	down.CloseNow()
}

func (p *Proxy) check(typ websocket.MessageType, data []byte) {
	if typ == websocket.MessageText {
		p.text.Add(1)
		if err := Check("", data); err != nil {
			p.invalid.Add(1)
			p.t.Errorf("runtime sent a message the schema rejects: %s\n%v", truncate(data), err)
		}
		return
	}
	p.binary.Add(1)
	if len(data) < 4 {
		p.t.Errorf("runtime sent a %d-byte binary frame", len(data))
		return
	}
	n := binary.LittleEndian.Uint32(data)
	if uint64(n) > uint64(len(data)-4) {
		p.t.Errorf("binary frame header_len %d past its end", n)
		return
	}
	hdr := data[4 : 4+n]
	def := "BinaryFrameHeader"
	if strings.Contains(string(hdr), `"type":"exec_output"`) {
		def = "BinaryExecOutputHeader"
	}
	if err := Check(def, hdr); err != nil {
		p.invalid.Add(1)
		p.t.Errorf("runtime sent a binary header the schema rejects: %s\n%v", truncate(hdr), err)
	}
}
