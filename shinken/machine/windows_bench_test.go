package machine_test

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// BenchmarkWindowControl measures what mcpserver.New now pays for the
// window probe, beside one exec of /bin/sh -c true (the reference), and a
// headless move (activate_window, a drag, the window list read back)
// beside the bare drag.
func BenchmarkWindowControl(b *testing.B) {
	ctx := b.Context()
	desk := headless.New(nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "t", Executor: osexec.New(&osexec.Options{Env: append(os.Environ(), "DISPLAY=")})})
	srv := httptest.NewServer(rt)
	b.Cleanup(func() { srv.Close(); rt.Close() })
	cl, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	c := tools(cl)
	if err := c.LaunchApp(ctx, "notes"); err != nil {
		b.Fatal(err)
	}
	ws, err := c.ListWindows(ctx)
	if err != nil || len(ws) != 1 {
		b.Fatal(ws, err)
	}
	id := ws[0].ID
	b.Run("probe", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.WindowControl(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exec-true", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Exec(ctx, &aci.ExecRequest{Argv: []string{"/bin/sh", "-c", "true"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	wc, err := c.WindowControl(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("move", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := wc.Move(ctx, id, 100+i%2*50, 80); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("drag", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			x := float64(150 + i%2*50)
			if err := c.Drag(ctx, aci.Px(x, 90), aci.Px(x+50-float64(i%2*100), 90), 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
