package toolset_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// desk is a headless desktop served by a Runtime, reached through a
// schema-validating proxy by a Client.
type desk struct {
	t   *testing.T
	ctx context.Context
	d   *headless.Desktop
	c   *client.Client
}

// newDesk serves a w×h headless desktop with app launched (args as given).
func newDesk(t *testing.T, w, h int, app string, args ...string) *desk {
	t.Helper()
	return newDeskOpts(t, w, h, nil, nil, app, args...)
}

// recorder is a headless desktop that records every input primitive that
// reaches it, in order: what the toolsets made of a model's call.
type recorder struct {
	*headless.Desktop
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

// Key records "+Name" for a press and "-Name" for a release.
func (r *recorder) Key(ctx context.Context, ev shinken.KeyEvent) error {
	if ev.Down {
		r.add("+" + ev.Key)
	} else {
		r.add("-" + ev.Key)
	}
	return r.Desktop.Key(ctx, ev)
}

// Type records "type:" and the text.
func (r *recorder) Type(ctx context.Context, text string) error {
	r.add("type:" + text)
	return r.Desktop.Type(ctx, text)
}

// Pointer records presses, releases and scrolls with their position.
func (r *recorder) Pointer(ctx context.Context, ev shinken.PointerEvent) error {
	switch ev.Kind {
	case shinken.PointerDown:
		r.add(fmt.Sprintf("down:%d@%d,%d", ev.Button, ev.X, ev.Y))
	case shinken.PointerUp:
		r.add(fmt.Sprintf("up:%d@%d,%d", ev.Button, ev.X, ev.Y))
	case shinken.PointerScroll:
		r.add(fmt.Sprintf("scroll:%d,%d@%d,%d", ev.DX, ev.DY, ev.X, ev.Y))
	case shinken.PointerMove:
		r.add(fmt.Sprintf("move@%d,%d", ev.X, ev.Y))
	}
	return r.Desktop.Pointer(ctx, ev)
}

// take returns the primitives recorded since the last take.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.log
	r.log = nil
	return l
}

// newRecDesk is newDesk over a recorder, with opts for the runtime.
func newRecDesk(t *testing.T, w, h int, opts *shinken.RuntimeOptions, app string, args ...string) (*desk, *recorder) {
	t.Helper()
	rec := &recorder{}
	k := newDeskOpts(t, w, h, func(d *headless.Desktop) shinken.Backend { rec.Desktop = d; return rec }, opts, app, args...)
	return k, rec
}

// newDeskOpts serves the desktop through the backend wrap makes of it
// (nil: the desktop itself) and a runtime with opts (the token is set).
func newDeskOpts(t *testing.T, w, h int, wrap func(*headless.Desktop) shinken.Backend, opts *shinken.RuntimeOptions, app string, args ...string) *desk {
	t.Helper()
	ctx := t.Context()
	d := headless.New(&headless.Options{Width: w, Height: h})
	if err := d.Launch(ctx, app, args); err != nil {
		t.Fatal(err)
	}
	var b shinken.Backend = d
	if wrap != nil {
		b = wrap(d)
	}
	return &desk{t: t, ctx: ctx, d: d, c: schematest.Serve(t, b, opts)}
}

// element finds the element with role and name in the active app.
func (k *desk) element(role, name string) aci.Element {
	k.t.Helper()
	obs, err := k.c.Observe(k.ctx, nil)
	if err != nil {
		k.t.Fatal(err)
	}
	for _, el := range obs.Elements {
		if el.Role == role && el.Name == name {
			return el
		}
	}
	k.t.Fatalf("no %s %q in\n%s", role, name, obs.TreeText)
	return aci.Element{}
}

// rect is an element's box in action pixels.
func rect(el aci.Element) image.Rectangle {
	b := el.BBox
	return image.Rect(int(b[0]), int(b[1]), int(b[0]+b[2]), int(b[1]+b[3]))
}

func centre(r image.Rectangle) image.Point { return r.Min.Add(r.Max).Div(2) }

// modelRect maps an element's box to the model's screenshot: what a model
// reading the scaled screenshot sees.
func modelRect(sc interface {
	ToModel(image.Point) image.Point
}, r image.Rectangle) image.Rectangle {
	return image.Rectangle{Min: sc.ToModel(r.Min), Max: sc.ToModel(r.Max.Sub(image.Pt(1, 1))).Add(image.Pt(1, 1))}
}

func base64Decode(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func colorRGBA(r, g, b, a uint8) color.RGBA { return color.RGBA{r, g, b, a} }
