package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/strictjson"
	"shinken.dev/go/shinken"
)

// The inspector endpoint (/inspect) gives the page what the ACI does not:
// the session feed, and takeover. It is a WebSocket of JSON text messages,
// behind the same token as the ACI.
//
// The page sends first {"type":"hello","token":T}; a wrong token closes
// with 1008. The daemon answers {"type":"welcome","held":bool,"by":S} and
// from then on sends {"type":"event","event":E,"lost":N} for each feed
// event (E is a shinken.Event without its tree_text; N counts the events
// this page lost because it read too slowly).
//
// The page may send:
//
//	{"type":"take","by":"Ada"}              take the input over
//	{"type":"hand_back"}                    give it back
//	{"type":"pointer","id":7,"kind":"down","x":10,"y":20,"button":"left"}
//	{"type":"pointer","id":8,"kind":"scroll","x":10,"y":20,"dy":3}
//	{"type":"type","id":9,"text":"é✓"}     printable text, any characters
//	{"type":"keys","id":10,"keys":"ctrl+a"} a key expression, as the key verb's
//
// Each input message is answered {"type":"done","id":N} once injected, or
// {"type":"error","id":N,"error":S}; take and hand_back are answered with
// {"type":"held","held":bool,"by":S}. Input sent without a takeover is
// refused. A page that disconnects hands back what it held.

// inspectMsg is one message from the page.
type inspectMsg struct {
	Type   string  `json:"type" wire:"required"`
	ID     int64   `json:"id,omitempty"`
	Token  string  `json:"token,omitempty"`
	By     string  `json:"by,omitempty"`
	Kind   string  `json:"kind,omitempty"`
	X      float64 `json:"x,omitempty"`
	Y      float64 `json:"y,omitempty"`
	Button string  `json:"button,omitempty"`
	DX     int     `json:"dx,omitempty"`
	DY     int     `json:"dy,omitempty"`
	Text   string  `json:"text,omitempty"`
	Keys   string  `json:"keys,omitempty"`
}

// maxInspectMessage bounds one message from the page.
const maxInspectMessage = 256 << 10

// errInspect is a message the page got wrong.
type errInspect struct{ msg string }

func (e *errInspect) Error() string { return "invalid_message: " + e.msg }

// decodeInspect decodes and checks one message from the page.
func decodeInspect(data []byte) (*inspectMsg, error) {
	var m inspectMsg
	if err := strictjson.Schema.Unmarshal(data, &m); err != nil {
		return nil, &errInspect{err.Error()}
	}
	switch m.Type {
	case "hello", "take", "hand_back":
	case "pointer":
		if _, ok := pointerKinds[m.Kind]; !ok {
			return nil, &errInspect{fmt.Sprintf("pointer kind %q: want move, down, up or scroll", m.Kind)}
		}
		if _, ok := buttons[m.Button]; !ok {
			return nil, &errInspect{fmt.Sprintf("button %q: want left, middle or right", m.Button)}
		}
		if m.X < 0 || m.Y < 0 || m.X > 1<<16 || m.Y > 1<<16 {
			return nil, &errInspect{fmt.Sprintf("point (%g, %g) is off any screen", m.X, m.Y)}
		}
		if m.DX < -100 || m.DX > 100 || m.DY < -100 || m.DY > 100 {
			return nil, &errInspect{"a scroll moves at most 100 notches"}
		}
	case "type":
		if m.Text == "" {
			return nil, &errInspect{"type without text"}
		}
	case "keys":
		if _, err := shinken.ParseKeys(m.Keys); err != nil {
			return nil, err
		}
	default:
		return nil, &errInspect{fmt.Sprintf("unknown message type %q", m.Type)}
	}
	return &m, nil
}

var pointerKinds = map[string]shinken.PointerKind{
	"move": shinken.PointerMove, "down": shinken.PointerDown, "up": shinken.PointerUp, "scroll": shinken.PointerScroll,
}

var buttons = map[string]shinken.Button{
	"": shinken.ButtonLeft, "left": shinken.ButtonLeft, "middle": shinken.ButtonMiddle, "right": shinken.ButtonRight,
}

// inspector serves /inspect.
type inspector struct {
	rt    func() *shinken.Runtime // the current one: a desktop restart replaces it
	feed  *shinken.Feed
	token func() string
	log   *slog.Logger
	ctx   context.Context // ends every page session on shutdown
	// origins are the other sites' origins allowed (the guard checked
	// them already; the WebSocket handshake checks them again).
	origins []string
}

func (in *inspector) tokenOK(got string) bool { return tokenEqual(got, in.token()) }

func (in *inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: in.origins})
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(maxInspectMessage)
	hctx, cancel := context.WithTimeout(in.ctx, 10*time.Second)
	typ, data, err := ws.Read(hctx)
	cancel()
	if err != nil {
		ws.Close(websocket.StatusPolicyViolation, "no hello")
		return
	}
	m, err := decodeInspect(data)
	if typ != websocket.MessageText || err != nil || m.Type != "hello" || !in.tokenOK(m.Token) {
		ws.Close(websocket.StatusPolicyViolation, "unauthorized: bad or missing token")
		return
	}
	s := &pageSession{in: in, ws: ws}
	s.serve(r.Context())
}

// pageSession is one page's /inspect connection.
type pageSession struct {
	in *inspector
	ws *websocket.Conn

	mu sync.Mutex
	tk *shinken.Takeover
}

func (s *pageSession) write(ctx context.Context, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return s.ws.Write(ctx, websocket.MessageText, data)
}

func (s *pageSession) held() map[string]any {
	by, held := s.in.rt().HeldBy()
	return map[string]any{"type": "held", "held": held, "by": by}
}

func (s *pageSession) serve(parent context.Context) {
	ctx, cancel := context.WithCancel(s.in.ctx)
	defer cancel()
	stop := context.AfterFunc(parent, cancel)
	defer stop()
	defer s.handBack()
	w := s.held()
	w["type"] = "welcome"
	if s.write(ctx, w) != nil {
		return
	}
	sub := s.in.feed.Subscribe(512, timelineKinds...)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel()
		forwardEvents(ctx, sub, func(m map[string]any) error { return s.write(ctx, m) })
	}()
	defer func() {
		sub.Close()
		wg.Wait()
	}()
	for {
		typ, data, err := s.ws.Read(ctx)
		if err != nil {
			return
		}
		reply := s.handle(ctx, typ, data)
		if reply != nil && s.write(ctx, reply) != nil {
			return
		}
	}
}

// handle runs one message and returns the reply.
func (s *pageSession) handle(ctx context.Context, typ websocket.MessageType, data []byte) map[string]any {
	if typ != websocket.MessageText {
		return map[string]any{"type": "error", "error": "invalid_message: the page sends text messages"}
	}
	m, err := decodeInspect(data)
	if err != nil {
		return map[string]any{"type": "error", "error": err.Error()}
	}
	fail := func(err error) map[string]any {
		return map[string]any{"type": "error", "id": m.ID, "error": err.Error()}
	}
	switch m.Type {
	case "hello":
		return fail(&errInspect{"hello sent twice"})
	case "take":
		s.mu.Lock()
		if s.tk == nil {
			by := m.By
			if by == "" {
				by = "a person at the page"
			}
			tk, err := s.in.rt().TakeOver(by)
			if err != nil {
				s.mu.Unlock()
				return fail(err)
			}
			s.tk = tk
		}
		s.mu.Unlock()
		return s.held()
	case "hand_back":
		s.handBack()
		return s.held()
	}
	s.mu.Lock()
	tk := s.tk
	s.mu.Unlock()
	if tk == nil {
		return fail(errors.New("permission_denied: take the input over first"))
	}
	switch m.Type {
	case "pointer":
		err = tk.Pointer(ctx, shinken.PointerEvent{Kind: pointerKinds[m.Kind], X: int(m.X), Y: int(m.Y),
			Button: buttons[m.Button], DX: m.DX, DY: m.DY})
	case "type":
		err = tk.Type(ctx, m.Text)
	case "keys":
		err = tk.Keys(ctx, m.Keys)
	}
	if err != nil {
		return fail(err)
	}
	return map[string]any{"type": "done", "id": m.ID}
}

func (s *pageSession) handBack() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tk != nil {
		s.tk.Release()
		s.tk = nil
	}
}
