package shinken_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"shinken.dev/go/internal/hosttool"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// TestWindowProbeNotJudged: the window tools' probe is the runtime's own
// look at what the machine offers, fixed plumbing that runs nothing the
// agent chose, so the Authorizer is not asked about it (a guard that
// refuses sh took the window tools away unseen); the same script with an
// argument it does not take is refused as an invalid tool call, and any
// other exec is still judged.
func TestWindowProbeNotJudged(t *testing.T) {
	var asked atomic.Int32
	deny := shinken.AuthorizerFunc(func(context.Context, shinken.AuthRequest) error {
		asked.Add(1)
		return errors.New("nothing runs")
	})
	e := newEnv(t, &shinken.RuntimeOptions{Authorizer: deny})
	c := e.dial(t, nil)
	ctx := testCtx(t)
	res, err := c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.WindowProbe.Argv("0x400001")})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("the probe: %+v %v", res, err)
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("the Authorizer was asked %d times about the probe", n)
	}
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: hosttool.WindowProbe.Argv("0x1; rm -rf x")}); !errors.Is(err, aci.ErrInvalidAction) {
		t.Fatalf("the probe with a word that is no window id: %v, want invalid_action", err)
	}
	if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"true"}}); !errors.Is(err, aci.ErrPermissionDenied) || asked.Load() != 1 {
		t.Fatalf("a plain exec: %v (asked %d), want it judged and refused", err, asked.Load())
	}
}
