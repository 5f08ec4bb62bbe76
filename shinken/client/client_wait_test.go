package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

func waitRig(t *testing.T) (*client.Client, map[string]string) {
	t.Helper()
	ctx := t.Context()
	desk := headless.New(nil)
	if err := desk.Launch(ctx, "form", nil); err != nil {
		t.Fatal(err)
	}
	c := schematest.Serve(t, desk, nil)
	obs, err := c.Observe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]string{}
	for _, el := range obs.Elements {
		ref[el.Role+" "+el.Name] = el.Ref
	}
	return c, ref
}

// TestWaitFor waits, from a second goroutine, for what an action of the
// first causes: a label that appears, one that disappears, a field whose
// value changes.
func TestWaitFor(t *testing.T) {
	c, ref := waitRig(t)
	ctx := t.Context()
	type result struct {
		e   *aci.Element
		err error
	}
	start := func(req client.WaitForRequest) chan result {
		ch := make(chan result, 1)
		go func() {
			e, err := c.WaitFor(ctx, req)
			ch <- result{e, err}
		}()
		return ch
	}
	appears := start(client.WaitForRequest{Role: "label", Name: "Submitted: Ada", Until: client.WaitAppears})
	disappears := start(client.WaitForRequest{Role: "label", Name: "Fill in the form", Until: client.WaitDisappears})
	if err := c.SetValue(ctx, aci.Ref(ref["text Name"]), "Ada"); err != nil {
		t.Fatal(err)
	}
	if err := c.Click(ctx, aci.Ref(ref["push button Submit"])); err != nil {
		t.Fatal(err)
	}
	if r := <-appears; r.err != nil || r.e == nil || !strings.Contains(r.e.Name, "Submitted: Ada") {
		t.Fatalf("appears: %+v, %v", r.e, r.err)
	}
	if r := <-disappears; r.err != nil || r.e != nil {
		t.Fatalf("disappears: %+v, %v", r.e, r.err)
	}

	// A field nobody touches: the wait times out.
	e, err := c.WaitFor(ctx, client.WaitForRequest{Role: "text", Name: "Email", Until: client.WaitChanges, Timeout: 100 * time.Millisecond})
	if !errors.Is(err, aci.ErrTimeout) || e != nil {
		t.Fatalf("an unchanged field: %+v, %v; want a timeout", e, err)
	}
}

// TestWaitForLooksOnce: a timeout shorter than an observation still gets
// one look: what is there is found, and what is not is reported after one
// observation, not before any.
func TestWaitForLooksOnce(t *testing.T) {
	c, _ := waitRig(t)
	ctx := t.Context()
	e, err := c.WaitFor(ctx, client.WaitForRequest{Role: "push button", Name: "Submit", Timeout: time.Nanosecond})
	if err != nil || e == nil || e.Name != "Submit" {
		t.Fatalf("an element on screen, 1 ns: %+v, %v", e, err)
	}
	var looks []int
	_, err = c.WaitFor(ctx, client.WaitForRequest{Name: "never there", Timeout: time.Nanosecond, Observed: func(n int) { looks = append(looks, n) }})
	if !errors.Is(err, aci.ErrTimeout) || len(looks) != 1 {
		t.Fatalf("an element never there, 1 ns: %v after observations %v; want a timeout after one", err, looks)
	}
}

// TestWaitForChanges sees a value set by another client while it waits.
func TestWaitForChanges(t *testing.T) {
	c, ref := waitRig(t)
	ctx := t.Context()
	done := make(chan *aci.Element, 1)
	errc := make(chan error, 1)
	go func() {
		e, err := c.WaitFor(ctx, client.WaitForRequest{Role: "text", Name: "Email", Until: client.WaitChanges, Interval: time.Millisecond})
		errc <- err
		done <- e
	}()
	// Whether a set lands before or after the wait's first observation
	// (its baseline), a later one differs from it: set a new value until
	// the wait ends.
	for i := 1; ; i++ {
		v := fmt.Sprintf("ada%d@example.com", i)
		if err := c.SetValue(ctx, aci.Ref(ref["text Email"]), v); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			e := <-done
			if err != nil || e == nil || !strings.HasPrefix(e.Value, "ada") {
				t.Fatalf("changes: %+v, %v", e, err)
			}
			return
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		default:
		}
	}
}

func TestWaitForNothingToWatch(t *testing.T) {
	c, _ := waitRig(t)
	_, err := c.WaitFor(context.Background(), client.WaitForRequest{Name: "no such thing", Until: client.WaitChanges})
	if !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("err = %v, want invalid_action", err)
	}
}

// TestWaitForValue matches an element by its value, ignoring case when
// asked, and reports each observation that does not end the wait.
func TestWaitForValue(t *testing.T) {
	c, ref := waitRig(t)
	ctx := t.Context()
	if err := c.SetValue(ctx, aci.Ref(ref["text Email"]), "Ada@Example.com"); err != nil {
		t.Fatal(err)
	}
	e, err := c.WaitFor(ctx, client.WaitForRequest{Role: "TEXT", Value: "ada@example", IgnoreCase: true})
	if err != nil || e == nil || e.Ref != ref["text Email"] {
		t.Fatalf("by value, ignoring case: %+v, %v", e, err)
	}
	var seen []int
	e, err = c.WaitFor(ctx, client.WaitForRequest{Role: "text", Value: "ada@example", Timeout: 100 * time.Millisecond,
		Interval: time.Millisecond, Observed: func(n int) { seen = append(seen, n) }})
	if !errors.Is(err, aci.ErrTimeout) || e != nil {
		t.Fatalf("case kept: %+v, %v; want a timeout", e, err)
	}
	if len(seen) < 2 || seen[0] != 1 || seen[1] != 2 {
		t.Fatalf("observed %v, want 1, 2...", seen)
	}
	if !strings.Contains(err.Error(), `a value containing "ada@example"`) {
		t.Fatalf("timeout %q does not say what it waited for", err)
	}
}
