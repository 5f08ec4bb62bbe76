package shinken_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestWaitPastMaxWaitRefused: the schema gives wait's ms (and a key
// hold's) no clamp, so a wait longer than the runtime's MaxWait is
// refused with invalid_action naming the bound, never acked after
// MaxWait as if it had been waited.
func TestWaitPastMaxWaitRefused(t *testing.T) {
	e := newEnv(t, &shinken.RuntimeOptions{MaxWait: 50 * time.Millisecond})
	c := e.dial(t, nil)
	ctx := testCtx(t)
	for _, a := range []*aci.Action{
		{Verb: aci.VerbWait, MS: 51},
		{Verb: aci.VerbKey, Keys: "shift", MS: 51},
	} {
		_, err := c.Do(ctx, a)
		if !errors.Is(err, aci.ErrInvalidAction) || !strings.Contains(err.Error(), "MaxWait (50 ms)") {
			t.Errorf("%s of 51 ms past a MaxWait of 50 ms: %v, want invalid_action naming the bound", a.Verb, err)
		}
	}
	if _, err := c.Do(ctx, &aci.Action{Verb: aci.VerbWait, MS: 50}); err != nil {
		t.Errorf("a wait of MaxWait: %v", err)
	}

	// As an outside client writes it: an integer far past any bound.
	r := e.raw(t, false)
	r.send(`{"type":"action","call_id":"w","action":{"verb":"wait","ms":1e30}}`)
	m := r.read()
	res, ok := m.(*aci.Ack)
	if !ok || res.OK || !strings.HasPrefix(res.Error, string(aci.CodeInvalidAction)) {
		t.Fatalf("a wait of 1e30 ms answered %#v, want a refusal with invalid_action", m)
	}
}
