package client

import (
	"context"
	"slices"
	"strings"
	"time"

	"shinken.dev/go/shinken/aci"
)

// WaitCondition says what [Client.WaitFor] waits for.
type WaitCondition uint8

// Wait conditions.
const (
	WaitAppears    WaitCondition = iota // an element matching is in the tree
	WaitDisappears                      // no element matches
	// WaitChanges: the value or states of the element that matched at the
	// start differ from what they were then (or it is gone).
	WaitChanges
)

// A WaitForRequest says what Client.WaitFor waits for: an element whose role
// is Role and whose name and value contain Name and Value (each "" for any).
type WaitForRequest struct {
	Role       string
	Name       string
	Value      string
	IgnoreCase bool // compare Role, Name and Value ignoring case
	Until      WaitCondition
	Timeout    time.Duration // bounds the wait after a first look; 0 means 10 s
	Interval   time.Duration // between two observations; 0 means 50 ms
	Desktop    bool          // every application, not just the active one
	// Observed, when set, is called after each observation that does not
	// end the wait with how many were taken: a caller reports progress.
	Observed func(n int)
}

// WaitFor observes until req's condition holds and returns the element that
// met it: nil for WaitDisappears; for WaitChanges the watched element as it
// is now, or nil when gone. Each observation is settled, those after the
// first are diffs. When the timeout passes first, the error wraps
// ErrTimeout.
func (c *Client) WaitFor(ctx context.Context, req WaitForRequest) (*aci.Element, error) {
	timeout, interval := req.Timeout, req.Interval
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var base *aci.Element // the element WaitChanges watches
	observeReq := &ObserveRequest{Desktop: req.Desktop}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for n := 1; ; n++ {
		first := n == 1
		// The first look is taken whatever the timeout (ctx bounds it): a
		// wait always answers from the tree, not from a busy machine's
		// scheduler.
		octx := wctx
		if first {
			octx = ctx
		}
		obs, err := c.Observe(octx, observeReq)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return nil, aci.Errorf(aci.CodeTimeout, "wait_for: %s", req.describe())
			}
			return nil, err
		}
		e := req.match(obs)
		switch req.Until {
		case WaitAppears:
			if e != nil {
				return e, nil
			}
		case WaitDisappears:
			if e == nil {
				return nil, nil
			}
		case WaitChanges:
			if first {
				if e == nil {
					return nil, aci.Errorf(aci.CodeInvalidAction, "wait_for: no element to watch: %s", req.describe())
				}
				base = e
				break
			}
			now := byRef(obs, base.Ref)
			if now == nil || now.Name != base.Name || now.Value != base.Value || !slices.Equal(now.States, base.States) {
				return now, nil
			}
		}
		if req.Observed != nil {
			req.Observed(n)
		}
		observeReq.Diff = true
		timer.Reset(min(interval, time.Until(deadline)))
		select {
		case <-timer.C:
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, aci.Errorf(aci.CodeTimeout, "wait_for: %s", req.describe())
		}
	}
}

// match returns the first element of obs matching r.
func (r *WaitForRequest) match(obs *aci.Observation) *aci.Element {
	for i := range obs.Elements {
		e := &obs.Elements[i]
		if r.matches(e.Role, r.Role, true) && r.matches(e.Name, r.Name, false) && r.matches(e.Value, r.Value, false) {
			return e
		}
	}
	return nil
}

// matches compares a field with what r asks of it: equal (whole) or
// containing it, ignoring case when r says so; "" matches anything.
func (r *WaitForRequest) matches(field, want string, whole bool) bool {
	switch {
	case want == "":
		return true
	case whole && r.IgnoreCase:
		return strings.EqualFold(field, want)
	case whole:
		return field == want
	case r.IgnoreCase:
		return strings.Contains(strings.ToLower(field), strings.ToLower(want))
	}
	return strings.Contains(field, want)
}

func (r *WaitForRequest) describe() string {
	what := map[WaitCondition]string{WaitAppears: "appears", WaitDisappears: "disappears", WaitChanges: "changes"}[r.Until]
	value := ""
	if r.Value != "" {
		value = " and a value containing " + quoteOrAny(r.Value)
	}
	return "an element with role " + quoteOrAny(r.Role) + " and a name containing " + quoteOrAny(r.Name) + value + " " + what
}

func quoteOrAny(s string) string {
	if s == "" {
		return "(any)"
	}
	return `"` + s + `"`
}

func byRef(obs *aci.Observation, ref string) *aci.Element {
	for i := range obs.Elements {
		if obs.Elements[i].Ref == ref {
			return &obs.Elements[i]
		}
	}
	return nil
}
