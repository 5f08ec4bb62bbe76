// Package settled checks, with real applications under Xvfb, that what an
// agent sees right after an action shows that action: the X11 backend with
// AT-SPI behind a Runtime, driven through a Client, with no sleep between
// acting and looking.
package settled

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/atspi"
	"shinken.dev/go/backend/x11/atspi/atspitest"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rounds is how many times each scenario acts and looks: 10, or as many
// as SHINKEN_ROUNDS says (20 and more under ./scripts/stress, to look for
// what load breaks).
var rounds = func() int {
	if n, err := strconv.Atoi(os.Getenv("SHINKEN_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 10
}()

// A rig is a desktop with a runtime serving it and a client on it.
type rig struct {
	t    testing.TB
	ctx  context.Context
	sess *atspitest.Session
	desk *x11.Accessible
	c    *client.Client

	mu      sync.Mutex
	settles []shinken.Event
}

func newRig(t testing.TB, screenReader bool) *rig {
	t.Helper()
	sess := atspitest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	b, err := x11.Open(ctx, &x11.Options{Display: sess.Display, Xauthority: sess.Xauthority,
		SessionBus: sess.SessionBus, LaunchEnv: sess.Env()})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ctx: ctx, sess: sess}
	r.desk = b.WithAccessibility(&atspi.Options{Address: sess.A11yBus, SessionBus: sess.SessionBus, ScreenReader: screenReader})
	t.Cleanup(func() { r.desk.Close() })
	r.c = schematest.Serve(t, r.desk, &shinken.RuntimeOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Recorder: shinken.RecorderFunc(func(e shinken.Event) {
			if e.Kind != shinken.EventSettle || e.Verb == "" { // an input action's settle
				return
			}
			r.mu.Lock()
			r.settles = append(r.settles, e)
			r.mu.Unlock()
		}),
	})
	return r
}

// takeSettles returns the settles reported since the last call.
func (r *rig) takeSettles() []shinken.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.settles
	r.settles = nil
	return s
}

func (r *rig) observe() *aci.Observation {
	r.t.Helper()
	o, err := r.c.Observe(r.ctx, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return o
}

// find returns the first element of o matching role and whose name
// contains name, or nil.
func find(o *aci.Observation, role, name string) *aci.Element {
	for i := range o.Elements {
		e := &o.Elements[i]
		if (role == "" || e.Role == role) && strings.Contains(e.Name, name) {
			return e
		}
	}
	return nil
}

// waitElement observes until an element matching role and name shows, in
// the same place twice in a row (a window manager places a new window
// after it maps), for the setup of a scenario (never between an action and
// its check). The deadline is generous: a browser's first start on a
// loaded machine takes tens of seconds.
func (r *rig) waitElement(role, name string) (*aci.Observation, *aci.Element) {
	r.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last []float64
	for {
		o := r.observe()
		if e := find(o, role, name); e != nil && len(e.BBox) == 4 && e.BBox[2] > 0 {
			if slices.Equal(e.BBox, last) {
				return o, e
			}
			last = e.BBox
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no %s %q in the tree:\n%s", role, name, o.TreeText)
		}
		<-tick.C
	}
}

// stillAt is the readiness of a round that clicks e at its place: it
// returns e as the tree places it now, once found at the same place twice
// in a row when it moved (a browser finishing its start lays its window
// out again: a bar shown over the page moves it down), and whether it
// moved. A loaded machine once saw a round's click miss a check box that
// had moved since the scenario found it.
func (r *rig) stillAt(e *aci.Element) (*aci.Element, bool) {
	r.t.Helper()
	now := byRef(r.observe(), e.Ref)
	if now != nil && slices.Equal(now.BBox, e.BBox) {
		return e, false
	}
	_, now = r.waitElement(e.Role, e.Name)
	return now, true
}

// stillRef is stillAt for an element found by its ref, not its role and
// name (an alert's Close button has the main window's as its namesake):
// e as the tree places it now, once found at the same place twice in a
// row.
func (r *rig) stillRef(e *aci.Element) *aci.Element {
	r.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := e.BBox
	for {
		o := r.observe()
		now := byRef(o, e.Ref)
		if now == nil {
			r.t.Fatalf("%s %q (%s) left the tree:\n%s", e.Role, e.Name, e.Ref, o.TreeText)
		}
		if slices.Equal(now.BBox, last) {
			return now
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s %q (%s) never stayed in place", e.Role, e.Name, e.Ref)
		}
		last = now.BBox
	}
}

func (r *rig) clickAt(e *aci.Element) {
	r.t.Helper()
	x, y := e.BBox[0]+e.BBox[2]/2, e.BBox[1]+e.BBox[3]/2
	if err := r.c.Click(r.ctx, aci.Px(x, y)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) shot() *client.Shot {
	r.t.Helper()
	s, err := r.c.Screenshot(r.ctx, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// took is how long a settle took.
func took(s shinken.Event) time.Duration {
	return time.Duration(s.DurationMS * float64(time.Millisecond))
}

// summary reports the settles' outcomes and p50/p95 of their times.
func summary(ss []shinken.Event) string {
	if len(ss) == 0 {
		return "no settles"
	}
	outcomes := map[shinken.SettleOutcome]int{}
	var d []time.Duration
	for _, s := range ss {
		outcomes[s.Settle]++
		d = append(d, took(s))
	}
	slices.Sort(d)
	return fmt.Sprintf("%d settles %v p50 %v p95 %v max %v", len(ss), outcomes,
		d[len(d)/2].Round(100*time.Microsecond), d[len(d)*95/100].Round(100*time.Microsecond), d[len(d)-1].Round(100*time.Microsecond))
}

// all returns the elements of o with role.
func all(o *aci.Observation, role string) []aci.Element {
	var out []aci.Element
	for _, e := range o.Elements {
		if e.Role == role {
			out = append(out, e)
		}
	}
	return out
}

func byRef(o *aci.Observation, ref string) *aci.Element {
	for i := range o.Elements {
		if o.Elements[i].Ref == ref {
			return &o.Elements[i]
		}
	}
	return nil
}

// later says what an element looks like half a second later, when a check
// has failed: late (stale) or never (lost).
func (r *rig) later(role, name string) string {
	time.Sleep(500 * time.Millisecond) // diagnosis of a failure only
	e := find(r.observe(), role, name)
	if e == nil {
		return "half a second later it is gone"
	}
	return fmt.Sprintf("half a second later it reads %v", e.States)
}

// lateBy says how long after a failed check an element matching role and
// name showed up, polling (a diagnosis of a failure only).
func (r *rig) lateBy(role, name string) string {
	start := time.Now()
	for time.Since(start) < 3*time.Second {
		if find(r.observe(), role, name) != nil {
			return fmt.Sprintf("it showed %v later", time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(5 * time.Millisecond) // diagnosis of a failure only
	}
	return "it never showed"
}
