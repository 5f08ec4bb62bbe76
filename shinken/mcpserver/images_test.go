package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineClient speaks MCP over a pair of pipes with no SDK, so that the
// lines the server writes can be compared byte for byte.
type lineClient struct {
	w  io.WriteCloser
	r  *bufio.Reader
	id int
}

// serveLines serves e's Server on in-memory pipes, through Run (run) or on
// the SDK's own connection, and returns a client of it, initialised.
func serveLines(t *testing.T, e *env, run bool) *lineClient {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	tr := &mcp.IOTransport{Reader: serverIn, Writer: serverOut}
	done := make(chan struct{})
	if run {
		go func() {
			defer close(done)
			e.srv.Run(context.Background(), tr)
		}()
	} else {
		ss, err := e.srv.MCP().Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(done)
			ss.Wait()
		}()
	}
	t.Cleanup(func() {
		clientOut.Close()
		clientIn.Close()
		<-done
	})
	lc := &lineClient{w: clientOut, r: bufio.NewReader(clientIn)}
	lc.call(t, `"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lines","version":"0"}}`)
	if _, err := io.WriteString(lc.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	return lc
}

func (lc *lineClient) call(t *testing.T, methodAndParams string) []byte {
	t.Helper()
	lc.id++
	if _, err := fmt.Fprintf(lc.w, `{"jsonrpc":"2.0","id":%d,"method":%s}`+"\n", lc.id, methodAndParams); err != nil {
		t.Fatal(err)
	}
	line, err := lc.r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// TestRunImagesSpliced checks that Run's stdio transport, which encodes
// images straight into the answer's line, writes the very line the SDK's
// own transport writes, for screenshots and zooms, one after the other and
// concurrently, and that the image in it is the PNG.
func TestRunImagesSpliced(t *testing.T) {
	e := newEnv(t, nil)
	ours, sdk := serveLines(t, e, true), serveLines(t, e, false)
	calls := []string{
		`"tools/call","params":{"name":"screenshot","arguments":{}}`,
		`"tools/call","params":{"name":"zoom","arguments":{"region":[0,0,200,100]}}`,
		`"tools/call","params":{"name":"screenshot","arguments":{}}`,
		`"tools/call","params":{"name":"list_windows","arguments":{}}`,
	}
	for _, c := range calls {
		a, b := ours.call(t, c), sdk.call(t, c)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: Run wrote\n%.300s…\nthe SDK's transport\n%.300s…", c, a, b)
		}
		var m struct {
			Result mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(a, &m); err != nil {
			t.Fatal(err)
		}
		if img, ok := m.Result.Content[0].(*mcp.ImageContent); ok {
			if _, err := png.Decode(bytes.NewReader(img.Data)); err != nil {
				t.Fatalf("%s: the image is no PNG: %v", c, err)
			}
		}
	}

	// Concurrent calls over the Go SDK's client on Run's transport: each
	// gets a whole PNG of its own.
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.srv.Run(context.Background(), &mcp.IOTransport{Reader: serverIn, Writer: serverOut})
	}()
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sess.Close()
		<-done
	}()
	errs := make(chan error, 8)
	for i := range cap(errs) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := map[string]any{}
			name := "screenshot"
			if i%2 == 1 {
				name, args = "zoom", map[string]any{"region": []int{0, 0, 100 + i, 100}}
			}
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err == nil {
				_, err = png.Decode(bytes.NewReader(res.Content[0].(*mcp.ImageContent).Data))
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestHandlerImagesSpliced checks that the Server's HTTP handler, which
// encodes images straight into the messages it writes, delivers the same
// images as the SDK's own handler of the same server, and whole PNGs to
// concurrent calls.
func TestHandlerImagesSpliced(t *testing.T) {
	e := newEnv(t, nil)
	defer e.srv.Close()
	ours := httptest.NewServer(e.srv.Handler(token))
	defer ours.Close()
	theirs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return e.srv.MCP() }, nil))
	defer theirs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(url string) *mcp.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
		sess, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	a, b := connect(ours.URL), connect(theirs.URL)
	defer a.Close()
	defer b.Close()
	image := func(sess *mcp.ClientSession, name string, args map[string]any) []byte {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Error(err)
			return nil
		}
		data := res.Content[0].(*mcp.ImageContent).Data
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s: the image is no PNG: %v", name, err)
		}
		return data
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{{"screenshot", map[string]any{}}, {"zoom", map[string]any{"region": []int{0, 0, 200, 100}}}} {
		if x, y := image(a, c.name, c.args), image(b, c.name, c.args); !bytes.Equal(x, y) {
			t.Fatalf("%s: %d bytes through the Server's handler, %d through the SDK's", c.name, len(x), len(y))
		}
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() { image(a, "zoom", map[string]any{"region": []int{0, 0, 100 + i, 100}}) })
	}
	wg.Wait()
}
