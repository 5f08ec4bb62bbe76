// Package realapps drives real applications (Chromium, Firefox, GTK, Qt,
// zenity) under a private X session through the runtime, as an agent
// would: observe, then act by element ref. The tree_text goldens in
// testdata come from these runs (see testdata/README.md).
package realapps

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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

var update = flag.Bool("update", false, "rewrite the tree_text goldens")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds how long a test waits for an application to show
// something, and each call of a test: a hang guard, not a pace. Chromium
// on two cores shared with a build took more than 30 s to show a page.
const waitFor = 3 * time.Minute

// A desk is a private desktop served by a runtime, and an agent's
// connection to it through a schema-validating proxy.
type desk struct {
	t    testing.TB
	sess *atspitest.Session
	b    *x11.Accessible
	c    *client.Client
	// firstMS is the capture_ms of the desk's first observation.
	firstMS *float64
	// fresh reads the session's trees whole (differential_test.go).
	fresh *atspi.Client
	// calls keeps the runtime's actions and observations (locator_test.go).
	calls *callLog
}

func newDesk(t testing.TB) *desk {
	t.Helper()
	sess := atspitest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	xb, err := x11.Open(ctx, &x11.Options{
		Display:    sess.Display,
		Xauthority: sess.Xauthority,
		SessionBus: sess.SessionBus,
		LaunchEnv:  sess.Env(),
	})
	if err != nil {
		t.Fatal(err)
	}
	b := xb.WithAccessibility(&atspi.Options{Address: sess.A11yBus, SessionBus: sess.SessionBus, ScreenReader: true})
	t.Cleanup(func() { b.Close() })
	calls := &callLog{}
	rt := shinken.NewRuntime(b, &shinken.RuntimeOptions{Token: "t", Recorder: calls})
	srv := httptest.NewServer(rt)
	t.Cleanup(func() {
		srv.Close()
		rt.Close()
	})
	proxy := schematest.NewProxy(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	c, err := client.Dial(ctx, proxy.URL, &client.DialOptions{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &desk{t: t, sess: sess, b: b, c: c, calls: calls}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

// observe observes until ok accepts the observation, and returns it.
func (d *desk) observe(what string, ok func(*aci.Observation) bool) *aci.Observation {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var last *aci.Observation
	for {
		obs, err := d.c.Observe(ctx, &client.ObserveRequest{Settle: 50 * time.Millisecond})
		if err == nil && d.firstMS == nil {
			d.firstMS = obs.CaptureMS
		}
		if err == nil && ok(obs) {
			return obs
		}
		if err == nil {
			last = obs
		}
		if ctx.Err() != nil {
			text := "(none)"
			if last != nil {
				text = last.TreeText
			}
			d.t.Fatalf("no observation shows %s within %v (last error %v); last tree_text:\n%s", what, waitFor, err, text)
		}
	}
}

// ref returns the ref of the first element with role and name.
func ref(obs *aci.Observation, role, name string) string {
	for _, e := range obs.Elements {
		if e.Role == role && e.Name == name {
			return e.Ref
		}
	}
	return ""
}

// element returns the element of ref.
// find is the first element of role named name (any name when name is
// ""), by the rules of Observation.Find, or nil.
func find(obs *aci.Observation, role, name string) *aci.Element {
	e, err := obs.Find(role, name)
	if err != nil {
		return nil
	}
	return &e
}

func element(obs *aci.Observation, ref string) *aci.Element {
	for i := range obs.Elements {
		if obs.Elements[i].Ref == ref {
			return &obs.Elements[i]
		}
	}
	return nil
}

// golden compares text with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, text string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != text {
		got := filepath.Join(os.TempDir(), "realapps-"+name)
		os.WriteFile(got, []byte(text), 0o644)
		t.Errorf("tree_text differs from %s (run with -update after checking it; got in %s):\n%s", path, got, text)
	}
}

func testdata(t testing.TB, name string) string {
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
