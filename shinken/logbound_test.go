package shinken_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"shinken.dev/go/shinken"
)

// logBuffer is a log destination safe for concurrent records.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestPeerInputLogged: what a client sends reaches the log bounded and
// quoted, before authentication (a refused hello with a 10 MB client name)
// and after (a session's name, an invalid message's call id and error),
// and refused hellos are rate-limited in the log.
func TestPeerInputLogged(t *testing.T) {
	var logs logBuffer
	ev := newEvents()
	e := newEnv(t, &shinken.RuntimeOptions{Recorder: ev, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := testCtx(t)
	huge := strings.Repeat("N", 10<<20) + "\nlevel=ERROR msg=forged"
	hello := func(url, name, token string) *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		ws.SetReadLimit(-1)
		msg := `{"type":"hello","v":0,"client":{"name":"` + strings.ReplaceAll(name, "\n", `\n`) + `","version":"1"},"token":"` + token + `"}`
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	const refused = 40
	for i := range refused {
		// Straight to the runtime: it sends nothing but the close.
		name := huge
		if i > 0 {
			name = "agent\n" + huge[:1000]
		}
		ws := hello(e.srv, name, "wrong")
		var ce websocket.CloseError
		if _, _, err := ws.Read(ctx); !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation {
			t.Fatalf("bad token: %v, want 1008", err)
		}
	}
	ws := hello(e.url, huge[len(huge)-(1<<20):], testToken)
	if _, data, err := ws.Read(ctx); err != nil || !strings.Contains(string(data), `"welcome"`) {
		t.Fatalf("welcome: %.200s %v", data, err)
	}
	bad := `{"type":"action","call_id":"` + huge[:1<<20] + `","action":{"verb":"click","` + strings.Repeat("z", 1<<20) + `\u001b[2J":1}}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	if _, data, err := ws.Read(ctx); err != nil || !strings.Contains(string(data), `"ok":false`) {
		t.Fatalf("invalid action: %.200s %v", data, err)
	}
	ws.Close(websocket.StatusNormalClosure, "")
	<-ev.closed

	out := logs.String()
	if len(out) > 8<<10 {
		t.Fatalf("the log holds %d bytes for %d refused hellos and one session: %.400s", len(out), refused, out)
	}
	if strings.Contains(out, "msg=forged") && !strings.Contains(out, `\nlevel=ERROR`) {
		t.Fatalf("a peer's newline reached the log: %s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	refusals := 0
	for _, l := range lines {
		if strings.Contains(l, "hello refused") {
			refusals++
			if !strings.Contains(l, `N…`) || !strings.Contains(l, "bytes)") {
				t.Fatalf("refusal record without the cut name: %s", l)
			}
		}
	}
	if refusals == 0 || refusals > 5 {
		t.Fatalf("%d of %d refused hellos logged, want 1 to 5:\n%s", refusals, refused, out)
	}
	if !strings.Contains(out, `msg="invalid message"`) {
		t.Fatalf("no record of the invalid message:\n%s", out)
	}
}
