package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"shinken.dev/go/shinken/mcpserver"
)

// httpClient speaks streamable HTTP MCP by hand, to send what the SDK's
// clients never send.
type httpClient struct {
	t       *testing.T
	url     string
	session string
}

func (hc *httpClient) post(body string, header map[string]string) *http.Response {
	hc.t.Helper()
	req, err := http.NewRequest("POST", hc.url, strings.NewReader(body))
	if err != nil {
		hc.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if hc.session != "" {
		req.Header.Set("Mcp-Session-Id", hc.session)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		hc.t.Fatal(err)
	}
	return resp
}

// do posts body and returns the whole answer.
func (hc *httpClient) do(body string, header map[string]string) (*http.Response, string) {
	hc.t.Helper()
	resp := hc.post(body, header)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		hc.t.Fatal(err)
	}
	return resp, string(b)
}

// newHTTPClient serves e's Server's Handler on a loopback socket and
// returns a client with an initialised session.
func newHTTPClient(t *testing.T, e *env) *httpClient {
	t.Helper()
	hs := httptest.NewServer(e.srv.Handler(token))
	t.Cleanup(func() {
		e.srv.Close()
		hs.Close()
	})
	hc := &httpClient{t: t, url: hs.URL}
	resp, body := hc.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	hc.session = resp.Header.Get("Mcp-Session-Id")
	if resp, body := hc.do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	return hc
}

// TestHandlerRules checks the MUSTs of MCP's streamable HTTP transport
// and of its security rules that the Handler meets on its own, without a
// daemon in front: Origin, Host, the bearer challenge, the session header,
// and a message that is neither a request nor a response.
func TestHandlerRules(t *testing.T) {
	e := newEnv(t, &mcpserver.Options{AllowedOrigins: []string{"https://console.example"}})
	hc := newHTTPClient(t, e)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, tt := range []struct {
		name      string
		body      string
		header    map[string]string
		noSession bool
		status    int
		want      string // in the body
		challenge string // WWW-Authenticate
	}{
		{name: "no origin", body: list, status: 200, want: `"tools"`},
		{name: "own origin", body: list, header: map[string]string{"Origin": hc.url}, status: 200, want: `"tools"`},
		{name: "allowed origin", body: list, header: map[string]string{"Origin": "https://console.example"}, status: 200, want: `"tools"`},
		{name: "foreign origin, valid token", body: list, header: map[string]string{"Origin": "https://evil.example"}, status: 403, want: "Origin not allowed"},
		{name: "rebound host, valid token", body: list, header: map[string]string{"Host": "evil.example"}, status: 403, want: "Host not allowed"},
		{name: "no token", body: list, header: map[string]string{"Authorization": ""}, status: 401, challenge: `Bearer realm="mcp"`},
		{name: "wrong token", body: list, header: map[string]string{"Authorization": "Bearer nope"}, status: 401, challenge: `Bearer realm="mcp", error="invalid_token"`},
		{name: "no session id", body: list, noSession: true, status: 400, want: `"code":-32600`},
		{name: "notification without session id", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, noSession: true, status: 400, want: `"id":null`},
		{name: "id and no method", body: `{"jsonrpc":"2.0","id":5}`, status: 400, want: `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,`},
		{name: "id and params, no method", body: `{"jsonrpc":"2.0","id":"x","params":{}}`, status: 400, want: `"id":"x","error":{"code":-32600`},
		{name: "a response", body: `{"jsonrpc":"2.0","id":6,"result":{}}`, status: 202},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			for k, v := range tt.header {
				h[k] = v
			}
			if tt.noSession {
				h["Mcp-Session-Id"] = ""
			}
			if host, ok := h["Host"]; ok {
				delete(h, "Host")
				req, _ := http.NewRequest("POST", hc.url, strings.NewReader(tt.body))
				req.Host = host
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
					t.Fatalf("%d %q, want %d with %q", resp.StatusCode, b, tt.status, tt.want)
				}
				return
			}
			resp, body := hc.do(tt.body, h)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) {
				t.Fatalf("%d %q, want %d with %q", resp.StatusCode, body, tt.status, tt.want)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Fatalf("WWW-Authenticate %q, want %q", got, tt.challenge)
			}
		})
	}
}

// TestNewRefusesBadOrigins checks that a malformed allow-list entry fails
// New rather than allowing something else than it says.
func TestNewRefusesBadOrigins(t *testing.T) {
	for _, o := range []mcpserver.Options{{AllowedOrigins: []string{"console.example"}}, {AllowedHosts: []string{"a:1"}}} {
		if _, err := mcpserver.New(context.Background(), nil, &o); err == nil || !strings.Contains(err.Error(), "httpguard") {
			t.Errorf("New(%+v) = %v", o, err)
		}
	}
}

// TestInvalidUTF8Arguments checks that arguments carrying bytes that are
// not UTF-8 are refused with invalid_action, as the runtime refuses an ACI
// message carrying them, and that nothing is typed or run.
func TestInvalidUTF8Arguments(t *testing.T) {
	e := newEnv(t, nil)
	hc := newHTTPClient(t, e)
	for i, call := range []string{
		`{"name":"type","arguments":{"text":"a` + "\xff" + `b"}}`,
		`{"name":"exec","arguments":{"argv":["echo","` + "\xc3" + `"]}}`,
		`{"name":"set_value","arguments":{"ref":"e1","value":"` + "\xed\xa0\x80" + `"}}`,
	} {
		_, body := hc.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 10+i, call), nil)
		if !strings.Contains(body, `"isError":true`) || !strings.Contains(body, `"invalid_action: the arguments are not valid UTF-8"`) {
			t.Fatalf("%s: %s", call, body)
		}
	}
	var obs struct {
		TreeText string `json:"tree_text"`
	}
	structured(t, e.call(t, "observe", map[string]any{"desktop": true}), &obs)
	if strings.Contains(obs.TreeText, "\ufffd") || strings.Contains(obs.TreeText, `"ab"`) || strings.Contains(obs.TreeText, `"a"`) {
		t.Fatalf("something was typed:\n%s", obs.TreeText)
	}
}

// TestCancelledCallUnanswered cancels a wait over HTTP once it has
// reported that it started: its stream ends with no response, and the
// session serves on.
func TestCancelledCallUnanswered(t *testing.T) {
	e := newEnv(t, nil)
	hc := newHTTPClient(t, e)
	resp := hc.post(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"wait","arguments":{"duration":60},"_meta":{"progressToken":"p"}}}`, nil)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "wait started") {
	}
	if r, body := hc.do(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"test"}}`, nil); r.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", r.StatusCode, body)
	}
	var rest []string
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data:") {
			rest = append(rest, sc.Text())
		}
	}
	for _, l := range rest {
		if strings.Contains(l, `"id":42`) {
			t.Fatalf("the cancelled call was answered: %s", l)
		}
	}
	if _, body := hc.do(`{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"cursor_position","arguments":{}}}`, nil); !strings.Contains(body, "X=") {
		t.Fatalf("after the cancel: %s", body)
	}
}

// TestCancelledCallUnansweredStdio is TestCancelledCallUnanswered on
// Run's stdio transport: after the cancel, the next line the server
// writes answers the next request.
func TestCancelledCallUnansweredStdio(t *testing.T) {
	e := newEnv(t, nil)
	lc := serveLines(t, e, true)
	if _, err := io.WriteString(lc.w, `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait","arguments":{"duration":60},"_meta":{"progressToken":"p"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := lc.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "wait started") {
			break
		}
	}
	if _, err := io.WriteString(lc.w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for {
		line := string(lc.call(t, `"ping"`))
		if strings.Contains(line, `"id":"w"`) {
			t.Fatalf("the cancelled call was answered: %s", line)
		}
		if strings.Contains(line, `"result":{}`) {
			return // a ping's answer
		}
		// A progress report of the wait, written before the cancel reached it.
		if !strings.Contains(line, "notifications/progress") {
			t.Fatalf("unexpected line %s", line)
		}
	}
}
