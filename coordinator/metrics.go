package coordinator

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus collectors, registered in the
// server's own registry (never the global one). Dataset names are not
// labels: they are unbounded.
type metrics struct {
	commits      *prometheus.CounterVec   // op, result
	conflicts    *prometheus.CounterVec   // op, kind
	retries      prometheus.Counter       // attempts beyond the first
	fallbacks    prometheus.Counter       // merged commits that failed and were redone one by one
	batchSize    prometheus.Histogram     // requests per published version
	commitTime   *prometheus.HistogramVec // op: time in the commit engine
	queueWait    prometheus.Histogram     // time from enqueue to start
	requestTime  *prometheus.HistogramVec // route, code
	rejected     *prometheus.CounterVec   // reason
	pending      prometheus.Gauge         // commit requests queued or running
	activeQueues prometheus.Gauge         // datasets with a queue
}

var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "commits_total",
			Help: "Commit requests answered, by operation and result (ok, conflict, requirement_failed, too_many_retries, outcome_unknown, error).",
		}, []string{"op", "result"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "conflicts_total",
			Help: "Commit requests that failed with a conflict, by operation and kind (retryable, incompatible, requirement, too_many_retries).",
		}, []string{"op", "kind"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "commit_retries_total",
			Help: "Publication attempts beyond the first (races lost to other writers of the same dataset).",
		}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "batch_fallbacks_total",
			Help: "Merged (group) commits that failed and were redone request by request.",
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "batch_size",
			Help:    "Commit requests published per version (1 = not batched).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
		}),
		commitTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "commit_duration_seconds",
			Help:    "Time spent in the commit engine per published version (or failed attempt), by operation.",
			Buckets: latencyBuckets,
		}, []string{"op"}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "queue_wait_seconds",
			Help:    "Time a commit request waited in its dataset's queue (including the group-commit window).",
			Buckets: latencyBuckets,
		}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and status code.",
			Buckets: latencyBuckets,
		}, []string{"route", "code"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "rejected_requests_total",
			Help: "Requests refused before any work, by reason (unauthorized, queue_full, shutting_down, body_too_large, invalid_dataset_name).",
		}, []string{"reason"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "pending_commits",
			Help: "Commit requests queued or being committed.",
		}),
		activeQueues: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "lancekeeper", Subsystem: "coordinator", Name: "active_datasets",
			Help: "Datasets with queued or running commits.",
		}),
	}
	reg.MustRegister(m.commits, m.conflicts, m.retries, m.fallbacks, m.batchSize, m.commitTime, m.queueWait,
		m.requestTime, m.rejected, m.pending, m.activeQueues,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
