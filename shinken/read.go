package shinken

// The reading side of a connection: its read loop, the dispatch of each
// message to the goroutine that answers it, and the input lane that keeps
// one client's input in order.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/coder/websocket"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
	"shinken.dev/go/shinken/aci"
)

// maxInFlight bounds the concurrent requests of one connection; past it the
// reader waits, which pushes back on the client.
const maxInFlight = 16

func (c *conn) readLoop() {
	wake := context.AfterFunc(c.ctx, func() {
		c.qmu.Lock()
		c.qcond.Broadcast()
		c.qmu.Unlock()
	})
	defer wake()
	for {
		if !c.waitForRoom() {
			return
		}
		typ, data, err := c.ws.Read(context.Background())
		c.touch()
		if err != nil {
			var ce websocket.CloseError
			switch {
			case errors.As(err, &ce):
				c.cancel(&closeErr{code: websocket.StatusNormalClosure, peer: true})
			case strings.Contains(err.Error(), "read limited at"):
				c.cancel(&closeErr{code: websocket.StatusMessageTooBig, reason: fmt.Sprintf("message over the %d-byte read limit", c.rt.opts.ReadLimit)})
			case c.ctx.Err() != nil:
			default:
				// The connection was lost: the client is gone.
				c.cancel(&closeErr{code: websocket.StatusNormalClosure, peer: true})
			}
			return
		}
		if typ != websocket.MessageText {
			c.cancel(&closeErr{code: websocket.StatusUnsupportedData, reason: "clients send text messages only"})
			return
		}
		if !c.dispatch(data) {
			return
		}
	}
}

// dispatch routes one message. It returns false when the connection must
// close.
func (c *conn) dispatch(data []byte) bool {
	m, err := aci.Unmarshal(data)
	if err != nil {
		callID, _ := strictjson.TopString(data, "call_id")
		if callID == "" {
			c.cancel(&closeErr{code: websocket.StatusInvalidFramePayloadData, reason: truncateReason(err.Error())})
			return false
		}
		typ, _ := strictjson.TopString(data, "type")
		verb, streamed := aci.Verb(""), false
		if typ == "action" {
			verb, streamed = peekVerb(data)
		}
		c.log.Info("invalid message", logtext.String("call_id", callID), logtext.Err(err))
		if streamed {
			c.send(&aci.Ack{CallID: callID, OK: false, Error: aci.WireError(err)})
			return true
		}
		c.fail(callID, typ, verb, err)
		return true
	}
	switch m := m.(type) {
	case *aci.Ping:
		c.send(&aci.Pong{T: m.T})
	case *aci.Query:
		if !c.rt.admit() {
			c.fail(m.CallID, "query", "", errDraining)
			return true
		}
		c.goWork(func() { c.query(m) })
	case *aci.ActionMsg:
		v := m.Action.Verb
		if !c.rt.verbs[v] {
			err := aci.Errorf(aci.CodeUnsupportedVerb, "%s is not supported by this runtime's backend", v)
			if v == "exec" {
				err = aci.Errorf(aci.CodeUnsupportedVerb, "exec is not supported by this runtime's backend: the runtime has no executor; set RuntimeOptions.Executor (e.g. osexec.New)")
			}
			c.emitAction(m, time.Now(), time.Time{}, err)
			c.fail(m.CallID, "action", v, err)
			return true
		}
		if !c.rt.admit() {
			c.emitAction(m, time.Now(), time.Time{}, errDraining)
			c.fail(m.CallID, "action", v, errDraining)
			return true
		}
		// Mutations, and the screencast switches, keep this client's order:
		// a stop sent after a start must find the stream started.
		if v.Mutating() || v == aci.VerbStartScreencast || v == aci.VerbStopScreencast {
			select {
			case c.input <- m:
			case <-c.ctx.Done():
				c.rt.callDone()
				return false
			}
			return true
		}
		c.goWork(func() { c.act(m) })
	case *aci.Hello:
		c.cancel(&closeErr{code: websocket.StatusPolicyViolation, reason: "hello sent twice"})
		return false
	default:
		c.cancel(&closeErr{code: websocket.StatusPolicyViolation, reason: "clients do not send " + m.MessageType() + " messages"})
		return false
	}
	return true
}

// peekVerb finds the verb of an action message that failed to decode, and
// whether it asked for a streamed exec, to answer in the right shape. Keys
// match exactly, as everywhere on this wire.
func peekVerb(data []byte) (aci.Verb, bool) {
	action, ok := strictjson.TopRaw(data, "action")
	if !ok {
		return "", false
	}
	v, _ := strictjson.TopString(action, "verb")
	stream, _ := strictjson.TopRaw(action, "stream")
	return aci.Verb(v), aci.Verb(v) == aci.VerbExec && string(stream) == "true"
}

// goWork runs the call f on its own goroutine, at most maxInFlight at
// once: past that the reader waits, which pushes back on the client. The
// call was admitted (Runtime.admit); it is counted out when f returns.
func (c *conn) goWork(f func()) {
	select {
	case c.slots <- struct{}{}:
	case <-c.ctx.Done():
		c.rt.callDone()
		return
	}
	c.work.Add(1)
	go func() {
		defer func() { <-c.slots; c.work.Done(); c.rt.callDone() }()
		defer c.recover()
		f()
	}()
}

// recoverCall turns a panic in a handler into an internal_error reply, so
// the call is answered and the process stays up.
func (c *conn) recoverCall(callID, typ string, verb aci.Verb) {
	if r := recover(); r != nil {
		c.log.Error("handler panic", logtext.String("call_id", callID), "panic", r, "stack", string(debug.Stack()))
		c.fail(callID, typ, verb, aci.Errorf(aci.CodeInternal, "the runtime failed handling this call (%v)", r))
	}
}

func (c *conn) recover() {
	if r := recover(); r != nil {
		c.log.Error("handler panic", "panic", r, "stack", string(debug.Stack()))
	}
}

func (c *conn) inputLoop() {
	for m := range c.input {
		if c.ctx.Err() != nil {
			c.rt.callDone()
			continue // drain
		}
		func() {
			defer c.rt.callDone()
			defer c.recover()
			c.act(m)
		}()
	}
}
