package shinken

// sendTooLarge answers, in place of a reply of n bytes that the message cap
// (RuntimeOptions.MaxMessage) does not take, the too_large failure of the
// same call. It reports false when m answers no call (nothing is sent).
func (c *conn) sendTooLarge(m Message, n int) bool {
	err := Errorf(CodeTooLarge, "the %d-byte %s is over the %d-byte message cap", n, m.MessageType(), c.rt.opts.MaxMessage)
	c.log.Warn("reply over the message cap", "type", m.MessageType(), "bytes", n)
	switch m := m.(type) {
	case *Result:
		return c.send(&Result{CallID: m.CallID, OK: false, Error: WireError(err)})
	case *Observation:
		if m.Cause != "" && m.Stream == "" {
			return c.send(&Ack{CallID: m.Cause, OK: false, Error: WireError(err)})
		}
	}
	return false
}
