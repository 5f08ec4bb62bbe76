package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/mcpserver"
)

// benchRuntime serves a 1920×1080 headless desktop on loopback (no
// validating proxy: it would be measured too) to one ACI Client, and an
// MCP server over that Client.
func benchRuntime(b *testing.B) (*shinken.Client, *mcpserver.Server) {
	b.Helper()
	ctx := context.Background()
	desk := headless.New(&headless.Options{Width: 1920, Height: 1080})
	desk.Launch(ctx, "notes", nil)
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: token, Logger: slog.New(slog.DiscardHandler)})
	hs := httptest.NewServer(rt)
	// The frame cache off: every screenshot, either way, is encoded anew.
	c, err := shinken.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), &shinken.DialOptions{Token: token, NoFrameCache: true})
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

// benchEnv is benchRuntime with the Go SDK's MCP client over a stdio
// transport: two OS pipes, newline-delimited JSON-RPC, as between a client
// and `-mcp stdio`.
func benchEnv(b *testing.B) (*shinken.Client, *mcp.ClientSession) {
	b.Helper()
	ctx := context.Background()
	c, srv := benchRuntime(b)
	p := newStdioPipes(b)
	ss, err := srv.MCP().Connect(ctx, &mcp.IOTransport{Reader: p.serverIn, Writer: p.serverOut}, nil)
	if err != nil {
		b.Fatal(err)
	}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, &mcp.IOTransport{Reader: p.clientIn, Writer: p.clientOut}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		sess.Close()
		ss.Wait()
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

func newRawClient(b *testing.B, srv *mcpserver.Server) *rawClient {
	b.Helper()
	p := newStdioPipes(b)
	ss, err := srv.MCP().Connect(context.Background(), &mcp.IOTransport{Reader: p.serverIn, Writer: p.serverOut}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		p.clientOut.Close()
		ss.Wait()
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
// the medians and their ratio.
func pair(b *testing.B, ref, ours func() error) {
	var lref, lours []time.Duration
	for b.Loop() {
		s := time.Now()
		if err := ref(); err != nil {
			b.Fatal(err)
		}
		m := time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		lref = append(lref, m.Sub(s))
		lours = append(lours, time.Since(m))
	}
	slices.Sort(lref)
	slices.Sort(lours)
	r, o := lref[len(lref)/2], lours[len(lours)/2]
	b.ReportMetric(float64(r.Microseconds()), "aci-p50-µs")
	b.ReportMetric(float64(o.Microseconds()), "mcp-p50-µs")
	b.ReportMetric(float64((o - r).Microseconds()), "overhead-p50-µs")
	b.ReportMetric(float64(o)/float64(r), "mcp/aci")
}

// BenchmarkLeftClick is the left_click tool over stdio against the same
// click (the same screen pixel) through the ACI Client.
func BenchmarkLeftClick(b *testing.B) {
	c, sess := benchEnv(b)
	ctx := context.Background()
	// An empty stretch of the desktop: a model pixel of the 1024×576
	// screenshot, and the screen pixel it maps to.
	target := shinken.Px(1500, 1000)
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
// timed), or a raw one that reads the answer's line and decodes nothing.
func BenchmarkScreenshotTool(b *testing.B) {
	ctx := context.Background()
	aciShot := func(c *shinken.Client) func() error {
		return func() error {
			_, err := c.Screenshot(ctx, &shinken.ScreenshotRequest{MaxLongEdge: 1024})
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
	b.Run("raw-client", func(b *testing.B) {
		c, srv := benchRuntime(b)
		rc := newRawClient(b, srv)
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
	})
}

// BenchmarkImageResultJSON is what base64 in JSON costs the server and the
// client for one screenshot's result: marshal the tool result and
// unmarshal it back, against copying the PNG's bytes.
func BenchmarkImageResultJSON(b *testing.B) {
	c, _ := benchEnv(b)
	shot, err := c.Screenshot(context.Background(), &shinken.ScreenshotRequest{MaxLongEdge: 1024})
	if err != nil {
		b.Fatal(err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: shot.Data, MIMEType: "image/png"}}}
	var size int
	for b.Loop() {
		data, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		var back mcp.CallToolResult
		if err := json.Unmarshal(data, &back); err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(len(shot.Data)), "png-bytes")
	b.ReportMetric(float64(size), "json-bytes")
	b.ReportMetric(float64(base64.StdEncoding.EncodedLen(len(shot.Data))), "base64-bytes")
}
