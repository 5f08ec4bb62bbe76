package shinken

// A session's life once its hello is accepted: how many are open, the
// token that admits them, the keep-alive that finds a peer gone, and how
// one ends.

import (
	"context"
	"time"

	"github.com/coder/websocket"
)

// Sessions returns the number of open sessions (connections whose hello
// was accepted).
func (rt *Runtime) Sessions() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n := 0
	for c := range rt.live {
		if c.open.Load() {
			n++
		}
	}
	return n
}

// SetToken replaces the token a hello must carry, without a restart: from
// the call on, only the new token opens a session, and every open session
// (opened with the old token) is closed with 1008 and the reason "token
// changed". An empty token refuses every TCP client, as in
// RuntimeOptions.Token.
func (rt *Runtime) SetToken(token string) {
	rt.token.Store(&token)
	rt.mu.Lock()
	var open []*conn
	for c := range rt.live {
		if c.open.Load() {
			open = append(open, c)
		}
	}
	rt.mu.Unlock()
	for _, c := range open {
		c.end(websocket.StatusPolicyViolation, "token changed")
	}
}

// end closes the session with code: in-flight work is cancelled and the
// close handshake starts, which ends the reader.
func (c *conn) end(code websocket.StatusCode, reason string) {
	c.cancel(&closeErr{code: code, reason: reason})
	c.closeWS(code, reason)
}

// keepAlive pings the client whenever the connection has been idle for
// RuntimeOptions.KeepAlive, so that routers and load balancers between
// them do not drop it as idle, and a client that no longer answers is
// found: a ping unanswered within WriteTimeout closes the connection.
func (c *conn) keepAlive() {
	every := c.rt.opts.KeepAlive
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		idle := time.Since(time.Unix(0, c.active.Load()))
		if idle < every {
			t.Reset(every - idle)
			continue
		}
		// Not c.ctx: cancelling the context of a ping makes the WebSocket
		// library drop the connection without its close frame.
		ctx, cancel := context.WithTimeout(context.Background(), c.rt.opts.WriteTimeout)
		err := c.ws.Ping(ctx)
		cancel()
		if err != nil {
			if c.ctx.Err() == nil {
				// A peer that answers no ping answers no close handshake
				// either: drop the connection, which ends the reader.
				c.log.Info("keepalive ping unanswered: dropping the connection", "err", err)
				c.cancel(&closeErr{code: websocket.StatusGoingAway, reason: "keepalive ping unanswered", peer: true})
				c.closeOnce.Do(func() { c.ws.CloseNow() })
			}
			return
		}
		c.touch()
		t.Reset(every)
	}
}

// touch records traffic on the connection, for keepAlive.
func (c *conn) touch() { c.active.Store(time.Now().UnixNano()) }

// finish marks the connection over, waking waitFlushed.
func (c *conn) finish() {
	c.over.Store(true)
	c.qmu.Lock()
	c.qcond.Broadcast()
	c.qmu.Unlock()
}
