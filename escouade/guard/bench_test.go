package guard_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/gate"
	"shinken.dev/go/escouade/guard"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// BenchmarkJudge is what the guard costs a request: the gate's request
// and the guard's judgment of it, alone and as the daemon asks it (the
// Host's Decide of an in-process plugin), beside the same Decide of a
// plugin that allows everything at once (the reference).
func BenchmarkJudge(b *testing.B) {
	g, err := guard.New(&guard.Policy{Allow: agentAllow, Write: []string{b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	line := `cd /repo && git status --porcelain | grep -v '^??' | sort | head -20 > /dev/null; echo done`
	argv := []string{"find", ".", "-name", "*.go", "-type", "f"}
	allowAll := plugin.Handlers{Decide: func(context.Context, *plugin.Conn, protocol.DecideParams) (protocol.Decision, error) {
		return protocol.Decision{Verdict: protocol.Allow}, nil
	}}
	for _, tt := range []struct {
		name   string
		action aci.Action
	}{
		{"shell", aci.Action{Shell: &line}},
		{"argv", aci.Action{Argv: argv}},
	} {
		auth := shinken.AuthRequest{Verb: aci.VerbExec, Action: &tt.action}
		req, err := gate.Request(auth, "r")
		if err != nil {
			b.Fatal(err)
		}
		if d := g.Judge(req); d.Verdict != protocol.Allow {
			b.Fatal(d)
		}
		b.Run(tt.name+"/request+judge", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := gate.Request(auth, "r")
				if g.Judge(req).Verdict != protocol.Allow {
					b.Fatal("refused")
				}
			}
		})
		b.Run(tt.name+"/judge", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.Judge(req)
			}
		})
		for _, p := range []struct {
			name string
			hs   plugin.Handlers
		}{{"decide-guard", plugin.Handlers{Decide: g.Decide}}, {"decide-allow-all", allowAll}} {
			b.Run(tt.name+"/request+"+p.name, func(b *testing.B) {
				h := startHost(b, p.hs)
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					req, _ := gate.Request(auth, "r")
					d, err := h.Decide(ctx, req, escouade.About{Project: escouade.DefaultProject})
					if err != nil || d.Verdict != protocol.Allow {
						b.Fatal(d, err)
					}
				}
			})
		}
	}
}

// startHost is a Host with one in-process plugin answering with hs.
func startHost(b *testing.B, hs plugin.Handlers) *escouade.Host {
	b.Helper()
	m, err := manifest.ParseFunc([]byte(`{"id": "guard", "version": "1.0.0", "protocolVersion": 1, "permissions": {"decide": true}}`))
	if err != nil {
		b.Fatal(err)
	}
	h := escouade.New(&escouade.Options{Journal: slog.DiscardHandler})
	b.Cleanup(func() { h.Close(context.Background()) })
	run := func(ctx context.Context, in io.Reader, out io.Writer) error { return plugin.Serve(ctx, in, out, hs) }
	if _, err := h.StartFunc(context.Background(), m, "", run); err != nil {
		b.Fatal(err)
	}
	return h
}
