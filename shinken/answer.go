package shinken

// Answering a request: queries and actions routed by verb, and the shapes
// of their replies (ack, result, a refusal), with what a call's
// cancellation means.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/shinken/aci"
)

// errClientClosed stands, in the runtime's records, for the error of a call
// the client left before its answer: its outcome is OutcomeClientClosed.
var errClientClosed = errors.New("shinken: the client closed the connection")

// closedCause is what a call's error err stands for in the runtime's
// records. A call that failed once the connection was over failed because
// it was (its context was cancelled): that is the client's doing when the
// client left, and the runtime's closing otherwise, never the backend's
// error.
func (c *conn) closedCause(err error) error {
	if err != nil && c.ctx.Err() != nil {
		var ce *closeErr
		if errors.As(context.Cause(c.ctx), &ce) && ce.peer {
			return errClientClosed
		}
		return aci.ErrClosed
	}
	return err
}

// fail answers a request with ok=false, in the shape its verb answers with.
func (c *conn) fail(callID, typ string, verb aci.Verb, err error) {
	msg := aci.WireError(err)
	if typ == "query" || verb == aci.VerbClipboardGet || verb == aci.VerbExec {
		c.send(&aci.Result{CallID: callID, OK: false, Error: msg})
		return
	}
	c.send(&aci.Ack{CallID: callID, OK: false, Error: msg})
}

func (c *conn) ack(callID string) { c.send(&aci.Ack{CallID: callID, OK: true}) }

func (c *conn) result(callID string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		c.send(&aci.Result{CallID: callID, OK: false, Error: aci.WireError(aci.Errorf(aci.CodeInternal, "encode result: %v", err))})
		return
	}
	c.send(&aci.Result{CallID: callID, OK: true, Value: data})
}

func (c *conn) query(q *aci.Query) {
	defer c.recoverCall(q.CallID, "query", "")
	ctx := c.ctx
	switch q.Q {
	case aci.QueryPlatform:
		c.result(q.CallID, c.rt.platform)
	case aci.QueryScreenSize:
		d, err := c.rt.display(ctx)
		if err != nil {
			c.fail(q.CallID, "query", "", err)
			return
		}
		c.result(q.CallID, aci.ScreenSize{W: d.W, H: d.H})
	case aci.QueryReady:
		ready := true
		if c.rt.capturer != nil {
			_, err := c.rt.capturer.Display(ctx)
			ready = err == nil
		}
		c.result(q.CallID, ready)
	case aci.QueryListWindows:
		if c.rt.windows == nil {
			c.fail(q.CallID, "query", "", aci.Errorf(aci.CodeUnsupported, "the backend cannot list windows"))
			return
		}
		ws, err := c.rt.windows.Windows(ctx)
		if err != nil {
			c.fail(q.CallID, "query", "", err)
			return
		}
		out := make([]aci.WindowInfo, 0, len(ws))
		for _, w := range ws {
			out = append(out, windowInfo(w))
		}
		c.result(q.CallID, out)
	}
}

func windowInfo(w Window) aci.WindowInfo {
	wi := aci.WindowInfo{ID: w.ID, Title: w.Title, App: w.App, PID: w.PID}
	if !w.BBox.Empty() {
		wi.BBox = []int{w.BBox.Min.X, w.BBox.Min.Y, w.BBox.Dx(), w.BBox.Dy()}
	}
	active := w.Active
	wi.Active = &active
	return wi
}

// act runs one action and answers it.
func (c *conn) act(m *aci.ActionMsg) {
	a := &m.Action
	defer c.recoverCall(m.CallID, "action", a.Verb)
	if err := honoured(a); err != nil {
		c.fail(m.CallID, "action", a.Verb, err)
		return
	}
	start := time.Now()
	var err error
	var answered time.Time
	if c.rt.emitting() {
		if a.Verb.Mutating() {
			c.settleRep = SettleReport{} // the input lane's own
		}
		defer func() { c.emitAction(m, start, answered, err) }()
	}
	switch a.Verb {
	case aci.VerbScreenshot:
		err = c.screenshot(m.CallID, a)
		if err == nil {
			return
		}
	case aci.VerbStartScreencast:
		// It acks itself, before its first frame can be queued.
		if err = c.startScreencast(m.CallID, a); err == nil {
			return
		}
	case aci.VerbStopScreencast:
		c.rt.casts.stop(c)
	case aci.VerbWait:
		if err = c.rt.checkWait(a.MS); err != nil {
			break
		}
		t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			err = c.ctx.Err() // unanswered: recorded as the connection's end
			return
		}
	case aci.VerbObserve:
		err = c.observe(m.CallID, a)
		if err == nil {
			return
		}
	case aci.VerbExec:
		err = c.exec(m.CallID, a)
		return
	case aci.VerbClipboardGet:
		var text string
		text, err = c.rt.clipboard.ClipboardText(c.ctx)
		if err == nil && len(text) > c.rt.opts.MaxClipboard {
			err = aci.Errorf(aci.CodeTooLarge, "the clipboard holds %d bytes of text; at most %d are returned", len(text), c.rt.opts.MaxClipboard)
		}
		if err != nil {
			c.fail(m.CallID, "action", a.Verb, err)
			return
		}
		c.result(m.CallID, aci.ClipboardValue{Text: text})
		return
	default:
		err = c.mutate(m.CallID, a)
	}
	if err != nil {
		c.log.Debug("action failed", logtext.String("call_id", m.CallID), "verb", a.Verb, logtext.Err(err))
		c.fail(m.CallID, "action", a.Verb, err)
		return
	}
	answered = time.Now()
	c.ack(m.CallID)
	c.log.Debug("action", logtext.String("call_id", m.CallID), "verb", a.Verb, "took", time.Since(start))
	if a.Observe != nil && a.Verb.Mutating() {
		o := a.Observe
		if err := c.capture(m.CallID, o.Scope, o.Format, o.Quality, o.MaxLongEdge, ""); err != nil {
			// The action was done and acked; the observation the ack
			// promised cannot come, so a second ack, not ok, says why.
			c.log.Info("observe-after-act capture failed", logtext.String("call_id", m.CallID), logtext.Err(err))
			c.send(&aci.Ack{CallID: m.CallID, OK: false, Error: aci.WireError(err)})
		}
	}
}
