package metrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/metrics"
)

// A Runtime whose events are kept as Prometheus metrics; serve reg with
// promhttp.HandlerFor at /metrics.
func Example() {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	rt := shinken.NewRuntime(headless.New(nil), &shinken.RuntimeOptions{Token: "t", Recorder: m, Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()

	ctx := context.Background()
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "t"})
	if err != nil {
		panic(err)
	}
	c.Screenshot(ctx, nil)
	c.Close()
	rt.Close() // its sessions' events are all recorded once it returns

	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "shinken_action_duration_seconds" {
			for _, s := range mf.GetMetric() {
				fmt.Println(s.GetLabel()[0].GetValue(), s.GetLabel()[1].GetValue(), s.GetHistogram().GetSampleCount())
			}
		}
	}
	// Output: ok screenshot 1
}
