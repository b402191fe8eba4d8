package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, in a registry of its own so
// that several servers (tests) do not collide in the global one.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec   // endpoint, code
	latency    *prometheus.HistogramVec // endpoint
	stages     *prometheus.HistogramVec // stage
	inflight   prometheus.Gauge
	reloads    *prometheus.CounterVec // result
	generation prometheus.Gauge
}

// latencyBuckets span 100 µs to ~6.5 s: a stage over a small window takes
// well under a millisecond, a cold search over a large index seconds.
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 17)

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "semrank_http_requests_total",
			Help: "HTTP requests by endpoint and status code.",
		}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "semrank_http_request_duration_seconds",
			Help:    "HTTP request latency by endpoint.",
			Buckets: latencyBuckets,
		}, []string{"endpoint"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "semrank_stage_duration_seconds",
			Help:    "Time per search in each rerank stage, the first stage (Bleve BM25) and the fusion.",
			Buckets: latencyBuckets,
		}, []string{"stage"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "semrank_http_requests_in_flight",
			Help: "Requests being served.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "semrank_pipeline_reloads_total",
			Help: "Pipeline loads by result (ok or error).",
		}, []string{"result"}),
		generation: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "semrank_pipeline_generation",
			Help: "Generation of the pipeline in use: 1 at start, one more per successful reload.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.stages, m.inflight, m.reloads, m.generation,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observeRequest(endpoint string, code int, d time.Duration) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(endpoint).Observe(d.Seconds())
}

// observeStage is the pipelines' Observe hook.
func (m *metrics) observeStage(stage string, d time.Duration) {
	m.stages.WithLabelValues(stage).Observe(d.Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
