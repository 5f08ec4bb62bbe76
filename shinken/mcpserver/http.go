package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// What the streamable HTTP transport requires of a message before the
// SDK's handler sees it. The SDK answers a request without Mcp-Session-Id
// with a new session whose first request is not initialize (200 and a
// JSON-RPC error), and takes a message with an id and nothing else for a
// response (202, empty): MCP asks for 400 in the first case, and JSON-RPC
// for an Invalid Request error in the second.

// maxCheckedBody is the most of a POST body read to check its message,
// the SDK's own limit: a larger body is passed on, for the SDK to refuse
// with 413.
const maxCheckedBody = 4 << 20

// sessionIDHeader is the header of MCP's streamable HTTP transport that
// names the session.
const sessionIDHeader = "Mcp-Session-Id"

// jsonrpcInvalidRequest is JSON-RPC 2.0's code for a message that is not
// a valid request.
const jsonrpcInvalidRequest = -32600

// envelope is what checkMessages reads of a JSON-RPC message, decoded as
// the SDK decodes it (encoding/json), so that both see the same message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// checkMessages refuses, with 400 and a JSON-RPC error, a POST whose
// message has an id but neither a method nor a result nor an error, and a
// POST without Mcp-Session-Id whose message is not an initialize request.
// A body that is not one JSON object (a batch, garbage, too large) goes to
// the SDK, which refuses it with its own status.
func checkMessages(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, maxCheckedBody+1))
		if err != nil {
			http.Error(w, "mcpserver: reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		var m envelope
		if len(head) > maxCheckedBody || json.Unmarshal(head, &m) != nil {
			next.ServeHTTP(w, r)
			return
		}
		hasID := len(m.ID) > 0 && string(m.ID) != "null"
		switch {
		case hasID && m.Method == nil && m.Result == nil && m.Error == nil:
			rpcError(w, m.ID, "invalid request: a message with an id carries a method (a request) or a result or an error (a response)")
		case r.Header.Get(sessionIDHeader) == "" && (m.Method == nil || *m.Method != "initialize" || !hasID):
			rpcError(w, m.ID, "bad request: "+sessionIDHeader+" header missing: a session begins with an initialize request")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// rpcError answers 400 with a JSON-RPC Invalid Request error for id (null
// when the message had none).
func rpcError(w http.ResponseWriter, id json.RawMessage, msg string) {
	rpcErrorStatus(w, http.StatusBadRequest, id, msg)
}

// rpcErrorStatus answers status with a JSON-RPC Invalid Request error.
func rpcErrorStatus(w http.ResponseWriter, status int, id json.RawMessage, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{jsonrpcInvalidRequest, msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// A sessionLimit bounds the MCP sessions one HTTP handler keeps at once.
type sessionLimit struct {
	s   *Server
	max int

	mu   sync.Mutex
	live int // sessions open or being initialised
}

// handler refuses an initialize past the bound with 429; it counts the
// session it opens until the session ends. It sits after checkMessages,
// so a POST without Mcp-Session-Id is an initialize.
func (l *sessionLimit) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		full := l.live >= l.max
		if !full {
			l.live++
		}
		l.mu.Unlock()
		if full {
			w.Header().Set("Retry-After", "60")
			rpcErrorStatus(w, http.StatusTooManyRequests, nil, fmt.Sprintf(
				"too many MCP sessions: this token has %d open, the most the server keeps (end one with DELETE, or let it expire)", l.max))
			return
		}
		next.ServeHTTP(w, r)
		id := w.Header().Get(sessionIDHeader)
		for ss := range l.s.srv.Sessions() {
			if id != "" && ss.ID() == id {
				go func() {
					ss.Wait()
					l.release()
				}()
				return
			}
		}
		l.release() // no session was opened, or it has ended already
	})
}

func (l *sessionLimit) release() {
	l.mu.Lock()
	l.live--
	l.mu.Unlock()
}

// bearerChallenge adds RFC 6750's WWW-Authenticate challenge to the 401
// answers of h (the SDK's bearer check sends none without resource
// metadata): "Bearer" to a request without a token, with
// error="invalid_token" to one with another.
func bearerChallenge(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&challengeWriter{ResponseWriter: w, hadToken: r.Header.Get("Authorization") != ""}, r)
	})
}

type challengeWriter struct {
	http.ResponseWriter
	hadToken bool
}

func (w *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		v := `Bearer realm="mcp"`
		if w.hadToken {
			v += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", v)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the writer underneath, to flush.
func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
