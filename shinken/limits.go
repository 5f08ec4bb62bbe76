package shinken

import "shinken.dev/go/shinken/aci"

// sendTooLarge answers, in place of a reply of n bytes that the message cap
// (RuntimeOptions.MaxMessage) does not take, the too_large failure of the
// same call. It reports false when m answers no call (nothing is sent).
func (c *conn) sendTooLarge(m aci.Message, n int) bool {
	err := aci.Errorf(aci.CodeTooLarge, "the %d-byte %s is over the %d-byte message cap", n, m.MessageType(), c.rt.opts.MaxMessage)
	c.log.Warn("reply over the message cap", "type", m.MessageType(), "bytes", n)
	switch m := m.(type) {
	case *aci.Result:
		return c.send(&aci.Result{CallID: m.CallID, OK: false, Error: aci.WireError(err)})
	case *aci.Observation:
		if m.CallID != "" && m.Stream == "" {
			return c.send(&aci.Ack{CallID: m.CallID, OK: false, Error: aci.WireError(err)})
		}
	}
	return false
}
