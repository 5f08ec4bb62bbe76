// Package metrics keeps Prometheus metrics of a shinken.Runtime: it is a
// shinken.Recorder that turns the runtime's events (shinken.Event, the
// family a Feed also carries) into counters, gauges and histograms
// registered with a prometheus.Registerer.
//
//	m := metrics.New(prometheus.NewRegistry())
//	rt := shinken.NewRuntime(backend, &shinken.RuntimeOptions{Recorder: m})
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// The metrics, all prefixed shinken_:
//
//	sessions_open                     gauge      sessions open now
//	sessions_total                    counter    sessions opened
//	hellos_refused_total{reason}      counter    connections that did not become sessions
//	action_duration_seconds{verb,outcome}  histogram  actions answered, by outcome ("ok", the wire error code, or client_closed)
//	settle_duration_seconds           histogram  waits for a quiet UI before an observation
//	screenshot_bytes{format}          histogram  encoded screenshot sizes
//	screenshot_encode_seconds{format} histogram  screenshot encoding times
//	observe_capture_seconds           histogram  accessibility snapshot times
//	observe_nodes                     histogram  accessibility snapshot sizes
//	exec_duration_seconds{outcome}    histogram  commands run, by how they ended
//	screencast_frames_total{kind}     counter    screencast frames queued ("key" or "delta")
//	screencast_bytes_total            counter    screencast bytes queued
//	plugin_decisions_total{verdict}   counter    plugin decisions (see Decision)
//	desktop_restarts_total{part}      counter    desktop parts restarted (see Restart)
//
// A histogram's _count is the number of events, so action_duration_seconds
// counts actions by verb and outcome as well as timing them. An action
// whose client left before its answer (closed or lost the connection) has
// the outcome client_closed (shinken.OutcomeClientClosed), one cut short by
// the runtime's own closing "closed": neither is a backend_error.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"shinken.dev/go/shinken"
)

// Metrics records a Runtime's events as Prometheus metrics. It implements
// shinken.Recorder and is safe for concurrent use.
type Metrics struct {
	sessionsOpen    prometheus.Gauge
	sessionsTotal   prometheus.Counter
	hellosRefused   *prometheus.CounterVec
	actions         *prometheus.HistogramVec
	settle          prometheus.Histogram
	shotBytes       *prometheus.HistogramVec
	shotEncode      *prometheus.HistogramVec
	observeCapture  prometheus.Histogram
	observeNodes    prometheus.Histogram
	exec            *prometheus.HistogramVec
	castFrames      *prometheus.CounterVec
	castBytes       prometheus.Counter
	pluginDecisions *prometheus.CounterVec
	restarts        *prometheus.CounterVec
}

// latency buckets, in seconds: from a fast input (1 ms) to a long observe.
var latency = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New returns Metrics registered with reg. It panics, as
// prometheus.MustRegister does, when reg already holds them.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		sessionsOpen:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "shinken_sessions_open", Help: "ACI sessions open now."}),
		sessionsTotal: prometheus.NewCounter(prometheus.CounterOpts{Name: "shinken_sessions_total", Help: "ACI sessions opened (hellos accepted)."}),
		hellosRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shinken_hellos_refused_total",
			Help: "Connections that did not become sessions, by reason (unauthorized, bad_hello, timeout, draining)."}, []string{"reason"}),
		actions: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shinken_action_duration_seconds",
			Help: "Actions answered, by verb and outcome (ok, the wire error code, or client_closed when the client left first), from handling to reply.", Buckets: latency},
			[]string{"verb", "outcome"}),
		settle: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "shinken_settle_duration_seconds",
			Help: "Waits for a quiet UI before an observation.", Buckets: latency}),
		shotBytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shinken_screenshot_bytes",
			Help: "Encoded screenshot sizes, by format.", Buckets: prometheus.ExponentialBuckets(4<<10, 4, 8)}, []string{"format"}),
		shotEncode: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shinken_screenshot_encode_seconds",
			Help: "Screenshot encoding times, by format.", Buckets: latency}, []string{"format"}),
		observeCapture: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "shinken_observe_capture_seconds",
			Help: "Accessibility snapshot times, settle included.", Buckets: latency}),
		observeNodes: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "shinken_observe_nodes",
			Help: "Accessibility snapshot sizes, in nodes.", Buckets: prometheus.ExponentialBuckets(16, 2, 10)}),
		exec: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shinken_exec_duration_seconds",
			Help:    "Commands run, by how they ended (exited, signaled, timed_out, spawn_failed).",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 600}}, []string{"outcome"}),
		castFrames: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shinken_screencast_frames_total",
			Help: "Screencast frames queued, by kind (key or delta)."}, []string{"kind"}),
		castBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "shinken_screencast_bytes_total", Help: "Screencast bytes queued."}),
		pluginDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shinken_plugin_decisions_total",
			Help: "Plugin decisions on exec and launch_app, by verdict."}, []string{"verdict"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shinken_desktop_restarts_total",
			Help: "Desktop parts restarted after they died, by part."}, []string{"part"}),
	}
	reg.MustRegister(m.sessionsOpen, m.sessionsTotal, m.hellosRefused, m.actions, m.settle, m.shotBytes, m.shotEncode,
		m.observeCapture, m.observeNodes, m.exec, m.castFrames, m.castBytes, m.pluginDecisions, m.restarts)
	return m
}

// Record implements shinken.Recorder. Takeovers are not counted, nor
// decisions a program publishes: it counts those with Decision.
func (m *Metrics) Record(e shinken.Event) {
	switch e.Kind {
	case shinken.EventSessionOpened:
		m.sessionsOpen.Inc()
		m.sessionsTotal.Inc()
	case shinken.EventSessionClosed:
		m.sessionsOpen.Dec()
	case shinken.EventHelloRefused:
		m.hellosRefused.WithLabelValues(e.Outcome).Inc()
	case shinken.EventAction:
		m.actions.WithLabelValues(string(e.Verb), e.Outcome).Observe(e.DurationMS / 1000)
	case shinken.EventSettle:
		m.settle.Observe(e.DurationMS / 1000)
	case shinken.EventScreenshot:
		m.shotBytes.WithLabelValues(e.Outcome).Observe(float64(e.Bytes))
		m.shotEncode.WithLabelValues(e.Outcome).Observe(e.DurationMS / 1000)
	case shinken.EventObservation:
		m.observeCapture.Observe(e.DurationMS / 1000)
		m.observeNodes.Observe(float64(e.Nodes))
	case shinken.EventExec:
		m.exec.WithLabelValues(e.Outcome).Observe(e.DurationMS / 1000)
	case shinken.EventScreencastFrame:
		m.castFrames.WithLabelValues(e.Outcome).Inc()
		m.castBytes.Add(float64(e.Bytes))
	}
}

// Decision counts a plugin decision with its verdict (allow, deny, ask).
// The runtime does not see plugins; the program that links them calls it.
func (m *Metrics) Decision(verdict string) {
	m.pluginDecisions.WithLabelValues(verdict).Inc()
}

// Restart counts a restart of a desktop part (see package
// backend/x11/session).
func (m *Metrics) Restart(part string) {
	m.restarts.WithLabelValues(part).Inc()
}
