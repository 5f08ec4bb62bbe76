package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/mcpserver"
)

// benchRuntime serves a 1920×1080 headless desktop on loopback (no
// validating proxy: it would be measured too) to one ACI Client, and an
// MCP server over that Client.
func benchRuntime(b *testing.B) (*client.Client, *mcpserver.Server) {
	b.Helper()
	ctx := context.Background()
	desk := headless.New(&headless.Options{Width: 1920, Height: 1080})
	desk.Launch(ctx, "notes", nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: token, Logger: slog.New(slog.DiscardHandler)})
	hs := httptest.NewServer(rt)
	// The frame cache off: every screenshot, either way, is encoded anew.
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), &client.DialOptions{Token: token, NoFrameCache: true})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(ctx, c, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		rt.Close()
		hs.Close()
	})
	return c, srv
}

// stdioPipes are the two OS pipes of a stdio transport.
type stdioPipes struct {
	serverIn, clientIn   *os.File // read ends
	serverOut, clientOut *os.File // write ends
}

func newStdioPipes(b *testing.B) *stdioPipes {
	b.Helper()
	p := &stdioPipes{}
	var err error
	if p.serverIn, p.clientOut, err = os.Pipe(); err != nil {
		b.Fatal(err)
	}
	if p.clientIn, p.serverOut, err = os.Pipe(); err != nil {
		b.Fatal(err)
	}
	return p
}

// serveStdio serves srv on the server's ends of p: through Server.Run,
// as `-mcp stdio` does, or, with sdkTransport, on the SDK's own stdio
// connection (MCP().Connect), which encodes images through encoding/json.
// It returns a function that waits for the session to end.
func serveStdio(b *testing.B, srv *mcpserver.Server, p *stdioPipes, sdkTransport bool) (wait func()) {
	b.Helper()
	t := &mcp.IOTransport{Reader: p.serverIn, Writer: p.serverOut}
	if sdkTransport {
		ss, err := srv.MCP().Connect(context.Background(), t, nil)
		if err != nil {
			b.Fatal(err)
		}
		return func() { ss.Wait() }
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Run(context.Background(), t)
	}()
	return func() { <-done }
}

// benchEnv is benchRuntime with the Go SDK's MCP client over a stdio
// transport: two OS pipes, newline-delimited JSON-RPC, as between a client
// and `-mcp stdio`.
func benchEnv(b *testing.B) (*client.Client, *mcp.ClientSession) {
	b.Helper()
	ctx := context.Background()
	c, srv := benchRuntime(b)
	p := newStdioPipes(b)
	wait := serveStdio(b, srv, p, false)
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, &mcp.IOTransport{Reader: p.clientIn, Writer: p.clientOut}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		sess.Close()
		wait()
	})
	return c, sess
}

// rawClient speaks MCP over stdio pipes with no SDK: it writes request
// lines and reads answer lines without decoding them, so that what is
// timed is the server's work and the pipes', not a client's JSON decoder.
type rawClient struct {
	w  *os.File
	r  *bufio.Reader
	id int
}

func newRawClient(b *testing.B, srv *mcpserver.Server, sdkTransport bool) *rawClient {
	b.Helper()
	p := newStdioPipes(b)
	wait := serveStdio(b, srv, p, sdkTransport)
	b.Cleanup(func() {
		p.clientOut.Close()
		wait()
		p.clientIn.Close()
	})
	rc := &rawClient{w: p.clientOut, r: bufio.NewReaderSize(p.clientIn, 1<<20)}
	if _, err := rc.call(`"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`); err != nil {
		b.Fatal(err)
	}
	if _, err := rc.w.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"); err != nil {
		b.Fatal(err)
	}
	return rc
}

// call sends a request (the method and params, JSON-encoded after
// "method":) and returns its answer line.
func (rc *rawClient) call(methodAndParams string) ([]byte, error) {
	rc.id++
	if _, err := fmt.Fprintf(rc.w, `{"jsonrpc":"2.0","id":%d,"method":%s}`+"\n", rc.id, methodAndParams); err != nil {
		return nil, err
	}
	return rc.r.ReadSlice('\n')
}

// pair times the same operation done two ways, interleaved so that both
// see the same machine, and reports each one's median, the difference of
// the medians and their ratio; and, since the runtime, the server and the
// client all run in this process, the CPU time each way takes (mean per
// op), which a loaded machine does not inflate as it does wall time.
func pair(b *testing.B, ref, ours func() error) {
	var lref, lours []time.Duration
	var cref, cours time.Duration
	for b.Loop() {
		c0, s := cpuTime(), time.Now()
		if err := ref(); err != nil {
			b.Fatal(err)
		}
		c1, m := cpuTime(), time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		lref = append(lref, m.Sub(s))
		lours = append(lours, time.Since(m))
		c2 := cpuTime()
		cref += c1 - c0
		cours += c2 - c1
	}
	slices.Sort(lref)
	slices.Sort(lours)
	r, o := lref[len(lref)/2], lours[len(lours)/2]
	b.ReportMetric(float64(r.Microseconds()), "aci-p50-µs")
	b.ReportMetric(float64(o.Microseconds()), "mcp-p50-µs")
	b.ReportMetric(float64((o - r).Microseconds()), "overhead-p50-µs")
	b.ReportMetric(float64(o)/float64(r), "mcp/aci")
	n := float64(len(lref))
	b.ReportMetric(float64(cref.Microseconds())/n, "aci-cpu-µs")
	b.ReportMetric(float64(cours.Microseconds())/n, "mcp-cpu-µs")
	b.ReportMetric(float64(cours)/float64(cref), "cpu-mcp/aci")
}

// BenchmarkLeftClick is the left_click tool over stdio against the same
// click (the same screen pixel) through the ACI Client.
func BenchmarkLeftClick(b *testing.B) {
	c, sess := benchEnv(b)
	ctx := context.Background()
	// An empty stretch of the desktop: a model pixel of the 1024×576
	// screenshot, and the screen pixel it maps to.
	target := aci.Px(1500, 1000)
	args := map[string]any{"coordinate": []int{800, 533}}
	pair(b, func() error { return c.Click(ctx, target) }, func() error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "left_click", Arguments: args})
		if err == nil && res.IsError {
			b.Fatal(res.Content[0].(*mcp.TextContent).Text)
		}
		return err
	})
}

// BenchmarkScreenshotTool is the screenshot tool over stdio (a PNG at the
// model's 1024×576, base64 in JSON) against the ACI screenshot of the same
// size through the Client (binary frames, the PNG's bytes as they are).
// The MCP client is the Go SDK's (its JSON decoding of the answer is
// timed), or a raw one that reads the answer's line and decodes nothing;
// the server is served by Run, as `-mcp stdio` serves it, or for
// comparison on the SDK's own stdio connection.
func BenchmarkScreenshotTool(b *testing.B) {
	ctx := context.Background()
	aciShot := func(c *client.Client) func() error {
		return func() error {
			_, err := c.Screenshot(ctx, &client.ScreenshotRequest{MaxLongEdge: 1024})
			return err
		}
	}
	b.Run("go-sdk-client", func(b *testing.B) {
		c, sess := benchEnv(b)
		var n int
		pair(b, aciShot(c), func() error {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{}})
			if err == nil {
				n = len(res.Content[0].(*mcp.ImageContent).Data)
			}
			return err
		})
		b.ReportMetric(float64(n), "png-bytes")
	})
	raw := func(sdkTransport bool) func(b *testing.B) {
		return func(b *testing.B) {
			c, srv := benchRuntime(b)
			rc := newRawClient(b, srv, sdkTransport)
			var n int
			pair(b, aciShot(c), func() error {
				line, err := rc.call(`"tools/call","params":{"name":"screenshot","arguments":{}}`)
				if err == nil && !bytes.Contains(line[:min(len(line), 200)], []byte(`"type":"image"`)) {
					b.Fatalf("answer %.200s", line)
				}
				n = len(line)
				return err
			})
			b.ReportMetric(float64(n), "answer-bytes")
		}
	}
	b.Run("raw-client", raw(false))
	// The same on the SDK's own stdio connection, which encodes the image
	// through encoding/json: what Run's transport saves.
	b.Run("raw-client-sdk-transport", raw(true))
}

// BenchmarkImageResultJSON is what base64 in JSON costs one screenshot's
// result (a 1024×576 PNG): the server's encoding of the tool result as the
// SDK does it (marshal, then the message around it), the client's decoding
// as the Go SDK does it, and, for reference, the base64 encoding alone and
// one copy of the PNG's bytes, all that binary framing costs.
func BenchmarkImageResultJSON(b *testing.B) {
	c, _ := benchRuntime(b)
	shot, err := c.Screenshot(context.Background(), &client.ScreenshotRequest{MaxLongEdge: 1024})
	if err != nil {
		b.Fatal(err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: shot.Data, MIMEType: "image/png"}}}
	encode := func() ([]byte, error) {
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(raw)})
	}
	msg, err := encode()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		start := cpuTime()
		for b.Loop() {
			if _, err := encode(); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
		b.SetBytes(int64(len(msg)))
		b.ReportMetric(float64(len(shot.Data)), "png-bytes")
		b.ReportMetric(float64(len(msg)), "json-bytes")
	})
	b.Run("decode", func(b *testing.B) {
		start := cpuTime()
		defer reportCPU(b, start)
		for b.Loop() {
			var m struct {
				Result json.RawMessage `json:"result"`
			}
			var back mcp.CallToolResult
			if err := json.Unmarshal(msg, &m); err != nil {
				b.Fatal(err)
			}
			if err := json.Unmarshal(m.Result, &back); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(msg)))
	})
	b.Run("base64", func(b *testing.B) {
		buf := make([]byte, base64.StdEncoding.EncodedLen(len(shot.Data)))
		start := cpuTime()
		for b.Loop() {
			base64.StdEncoding.Encode(buf, shot.Data)
		}
		reportCPU(b, start)
		b.SetBytes(int64(len(shot.Data)))
	})
	b.Run("copy", func(b *testing.B) {
		buf := make([]byte, len(shot.Data))
		start := cpuTime()
		for b.Loop() {
			copy(buf, shot.Data)
		}
		reportCPU(b, start)
		b.SetBytes(int64(len(shot.Data)))
	})
}

// cpuTime is the process's user and system CPU time: on a loaded machine
// a measure of work that wall-clock time is not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// httpRawClient speaks streamable HTTP MCP with no SDK: it posts request
// bodies and reads whole answers without decoding them.
type httpRawClient struct {
	url, session string
	hc           *http.Client
	id           int
}

func newHTTPRawClient(b *testing.B, url string) *httpRawClient {
	b.Helper()
	rc := &httpRawClient{url: url, hc: &http.Client{}}
	resp, err := rc.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if err != nil {
		b.Fatal(err)
	}
	rc.session = resp.Header.Get("Mcp-Session-Id")
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	resp, err = rc.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return rc
}

func (rc *httpRawClient) post(body string) (*http.Response, error) {
	req, err := http.NewRequest("POST", rc.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if rc.session != "" {
		req.Header.Set("Mcp-Session-Id", rc.session)
	}
	return rc.hc.Do(req)
}

// call posts a tools/call and returns its whole answer.
func (rc *httpRawClient) call(params string) ([]byte, error) {
	rc.id++
	resp, err := rc.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, rc.id, params))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// BenchmarkScreenshotToolHTTP is the screenshot tool over streamable HTTP
// on loopback, read by a raw client, against the ACI screenshot: through
// the Server's Handler, which encodes the image straight into the answer,
// and through the SDK's own handler of the same server, which encodes it
// through encoding/json.
func BenchmarkScreenshotToolHTTP(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"handler", "sdk-handler"} {
		b.Run(name, func(b *testing.B) {
			c, srv := benchRuntime(b)
			h := srv.Handler(token)
			if name == "sdk-handler" {
				h = mcpserver.RequireToken(token, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() }, nil))
			}
			hs := httptest.NewServer(h)
			b.Cleanup(func() {
				srv.Close()
				hs.Close()
			})
			rc := newHTTPRawClient(b, hs.URL)
			var n int
			pair(b, func() error {
				_, err := c.Screenshot(ctx, &client.ScreenshotRequest{MaxLongEdge: 1024})
				return err
			}, func() error {
				body, err := rc.call(`{"name":"screenshot","arguments":{}}`)
				if err == nil && !bytes.Contains(body[:min(len(body), 300)], []byte(`"type":"image"`)) {
					b.Fatalf("answer %.300s", body)
				}
				n = len(body)
				return err
			})
			b.ReportMetric(float64(n), "answer-bytes")
		})
	}
}
