// Package coordinator is the commit coordinator service behind
// `lancekeeper serve`: an HTTP/JSON front end to the commit engine
// (package commit) for datasets under one or more configured roots.
//
// Clients write data files themselves, directly to the dataset's store;
// the coordinator only commits manifests. Every new data file is opened by
// the coordinator before it is committed, to decide the zone-write-seed
// flag (zone-seeds.md R54, R56) from the file itself and to prove that
// client and coordinator address the same storage.
//
// Commits of one dataset run one at a time on a per-dataset worker.
// Appends whose callers allow batching and that arrive within a short
// window are merged into one version (group commit, commit.MergeAppends);
// when a merged commit fails, its requests are committed one by one so
// each gets its own outcome. Correctness never depends on the coordinator
// being the only writer: every version is published with the store's
// atomic create-if-absent, so other coordinators and direct library
// writers of the same dataset race safely (the commit engine rebases or
// reports a conflict).
//
// Security: bearer tokens (none configured means loopback-only), a request
// body limit, HTTP timeouts, an allow-list rule for dataset names
// (api.ValidateDatasetName), and a per-dataset bound on pending
// commits (429 with Retry-After). Shutdown drains: accepted commits are
// finished and answered, new ones get 503. Metrics go to a per-server
// Prometheus registry; logs to log/slog. See docs/coordinator.md.
package coordinator
