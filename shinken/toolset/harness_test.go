package toolset_test

import (
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/internal/schematest"
	"shinken.dev/go/shinken"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// desk is a headless desktop served by a Runtime, reached through a
// schema-validating proxy by a Client.
type desk struct {
	t   *testing.T
	ctx context.Context
	d   *headless.Desktop
	c   *shinken.Client
}

// newDesk serves a w×h headless desktop with app launched (args as given).
func newDesk(t *testing.T, w, h int, app string, args ...string) *desk {
	t.Helper()
	ctx := t.Context()
	d := headless.New(&headless.Options{Width: w, Height: h})
	if err := d.Launch(ctx, app, args); err != nil {
		t.Fatal(err)
	}
	rt := shinken.NewRuntime(d, &shinken.RuntimeOptions{Token: "t"})
	srv := httptest.NewServer(rt)
	proxy := schematest.NewProxy(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	c, err := shinken.Dial(ctx, proxy.URL, &shinken.DialOptions{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		srv.Close()
		rt.Close()
	})
	return &desk{t: t, ctx: ctx, d: d, c: c}
}

// element finds the element with role and name in the active app.
func (k *desk) element(role, name string) shinken.Element {
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
	return shinken.Element{}
}

// rect is an element's box in action pixels.
func rect(el shinken.Element) image.Rectangle {
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
