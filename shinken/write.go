package shinken

// The writing side of a connection: one writer, a bounded queue of
// replies in front of it, and the back-pressure that queue puts on the
// reader.

import (
	"context"

	"github.com/coder/websocket"

	"shinken.dev/go/shinken/aci"
)

type outgoing struct {
	typ  websocket.MessageType
	data []byte
	done func() // called after the write, or when it is dropped
}

// send queues a message for the writer. It waits while the queue is full
// (replies are never dropped) and gives up only when the connection ends.
func (c *conn) send(m aci.Message) bool {
	data, err := aci.Marshal(m)
	if err != nil {
		c.log.Error("encode failed", "type", m.MessageType(), "err", err)
		return false
	}
	if len(data) > c.rt.opts.MaxMessage {
		return c.sendTooLarge(m, len(data))
	}
	return c.enqueue(outgoing{typ: websocket.MessageText, data: data})
}

// waitForRoom waits while the queued replies are over the byte budget. It
// reports false when the connection ended meanwhile.
func (c *conn) waitForRoom() bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	for c.queued > c.rt.opts.MaxQueuedBytes && c.ctx.Err() == nil {
		c.qcond.Wait()
	}
	return c.ctx.Err() == nil
}

func (c *conn) account(n int) {
	c.qmu.Lock()
	c.queued += int64(n)
	if n < 0 {
		c.qcond.Broadcast()
	}
	c.qmu.Unlock()
}

func (c *conn) enqueue(o outgoing) bool {
	c.account(len(o.data))
	select {
	case c.out <- o:
		return true
	case <-c.ctx.Done():
		c.account(-len(o.data))
		if o.done != nil {
			o.done()
		}
		return false
	}
}

func (c *conn) writeLoop() {
	for {
		select {
		case o := <-c.out:
			if !c.write(o) {
				return
			}
		case <-c.ctx.Done():
			// Flush what is already queued, so the replies to work that
			// finished are not lost, then stop.
			for {
				select {
				case o := <-c.out:
					if !c.write(o) {
						return
					}
				default:
					return
				}
			}
		}
	}
}

func (c *conn) write(o outgoing) bool {
	ctx, cancel := context.WithTimeout(context.Background(), c.rt.opts.WriteTimeout)
	defer cancel()
	err := c.ws.Write(ctx, o.typ, o.data)
	c.touch()
	c.account(-len(o.data))
	if o.done != nil {
		o.done()
	}
	if err != nil {
		c.cancel(&closeErr{code: websocket.StatusGoingAway, reason: "write failed", peer: true})
		return false
	}
	return true
}
