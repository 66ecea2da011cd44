package coordinator

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"gocloud.dev/blob"

	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// Server is a commit coordinator. Create it with New, serve it once with
// Serve or ListenAndServe (or mount Handler in your own http.Server and
// call Drain when stopping), and Close it.
type Server struct {
	cfg     Config
	log     *slog.Logger
	roots   []*root
	byName  map[string]*root
	tokens  [][sha256.Size]byte
	reg     *prometheus.Registry
	m       *metrics
	handler http.Handler
	idBase  string
	idSeq   atomic.Uint64

	mu       sync.Mutex
	queues   map[string]*dsQueue
	jobs     sync.WaitGroup // jobs queued or running
	draining atomic.Bool
	// hardCtx is cancelled when the drain deadline passes (or on Close):
	// commits still running are then abandoned.
	hardCtx    context.Context
	hardCancel context.CancelFunc
}

type root struct {
	name  string
	url   string // as reported to clients (store.RootPath form)
	st    *store.Store
	owned bool
}

// New opens the configured roots and builds the server. Every root's store
// must have an atomic create-if-absent unless cfg.AllowUnsafeCommit is set.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger, byName: map[string]*root{}, queues: map[string]*dsQueue{}, reg: prometheus.NewRegistry()}
	s.hardCtx, s.hardCancel = context.WithCancel(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	s.idBase = hex.EncodeToString(b[:])
	for i, t := range cfg.Tokens {
		if len(t) < MinTokenLen {
			return nil, fmt.Errorf("%w: token %d is %d bytes, shorter than %d", ErrBadConfig, i, len(t), MinTokenLen)
		}
		s.tokens = append(s.tokens, sha256.Sum256([]byte(t)))
	}
	for i, rc := range cfg.Roots {
		name := rc.Name
		if name == "" && i == 0 {
			name = DefaultRootName
		}
		if err := coordapi.ValidateRootName(name); err != nil {
			s.Close()
			return nil, fmt.Errorf("%w: root %d: %v", ErrBadConfig, i, err)
		}
		if s.byName[name] != nil {
			s.Close()
			return nil, fmt.Errorf("%w: two roots are named %q", ErrBadConfig, name)
		}
		r := &root{name: name, st: rc.Store}
		if r.st == nil {
			st, err := store.Open(ctx, rc.URL)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("%w: root %q: %w", ErrBadConfig, name, err)
			}
			r.st, r.owned = st, true
		}
		s.roots = append(s.roots, r)
		s.byName[name] = r
		if err := r.st.RequireAtomicCreate(cfg.AllowUnsafeCommit); err != nil {
			s.Close()
			return nil, fmt.Errorf("%w: root %q: %w", ErrBadConfig, name, err)
		}
		r.url = rc.URL
		if p, err := store.RootPath(rc.URL); err == nil {
			r.url = p
		}
		if r.url == "" {
			r.url = r.st.String()
		}
	}
	s.m = newMetrics(s.reg)
	s.handler = s.routes()
	return s, nil
}

// Close releases the roots the server opened and cancels running commits.
// Call it after Serve returned.
func (s *Server) Close() error {
	if s.hardCancel != nil {
		s.hardCancel()
	}
	var first error
	for _, r := range s.roots {
		if r.owned {
			if err := r.st.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Registry returns the server's Prometheus registry (what /metrics serves).
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Handler returns the HTTP handler with every endpoint, authentication,
// limits, logging and metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// RootStore returns the store of a configured root ("" is the default).
func (s *Server) RootStore(name string) (*store.Store, error) {
	r, err := s.root(name)
	if err != nil {
		return nil, err
	}
	return r.st, nil
}

// ListenAndServe listens on addr and calls Serve. Without tokens it refuses
// an address that is not loopback-only.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if len(s.tokens) == 0 && !IsLoopbackAddr(addr) {
		return fmt.Errorf("%w: --addr %s (configure tokens with --tokens-file or LANCEKEEPER_TOKENS, or bind 127.0.0.1)", ErrInsecureListen, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then drains: new commits are refused
// with 503, commits already accepted (queued or running) are finished and
// answered, and Serve returns when they are, or when ShutdownTimeout
// passes (the commits still running are then cancelled and an error is
// returned). Without tokens, only loopback (or Unix socket) listeners are
// accepted, and a warning is logged.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if len(s.tokens) == 0 {
		if !isLocalListener(ln.Addr()) {
			ln.Close()
			return fmt.Errorf("%w: %s", ErrInsecureListen, ln.Addr())
		}
		s.log.Warn("no bearer tokens configured: serving without authentication, loopback only", "addr", ln.Addr().String())
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	roots := make([]string, 0, len(s.roots))
	for _, r := range s.roots {
		roots = append(roots, r.name+"="+r.url)
	}
	s.log.Info("coordinator serving", "addr", ln.Addr().String(), "roots", roots, "auth", len(s.tokens) > 0,
		"group_commit", !s.cfg.DisableGroupCommit, "batch_window", s.cfg.BatchWindow.String())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.draining.Store(true)
		return err
	case <-ctx.Done():
	}
	s.log.Info("draining: refusing new commits, finishing accepted ones")
	dctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.Drain(dctx)
	if serr := hs.Shutdown(dctx); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		hs.Close()
		s.log.Error("drain incomplete", "error", err)
		return fmt.Errorf("coordinator shutdown: %w", err)
	}
	s.log.Info("drained")
	return nil
}

// Drain refuses new commits and waits until every accepted commit was
// answered. When ctx ends first, the commits still running are cancelled
// and ctx's error is returned.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	s.draining.Store(true)
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.jobs.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.hardCancel()
		<-done
		return ctx.Err()
	}
}

func isLocalListener(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

func (s *Server) root(name string) (*root, error) {
	if name == "" {
		return s.roots[0], nil
	}
	r := s.byName[name]
	if r == nil {
		return nil, &httpError{status: http.StatusBadRequest, code: coordapi.CodeUnknownRoot, msg: fmt.Sprintf("no root named %q is configured", name)}
	}
	return r, nil
}

// datasetStore validates a dataset name and returns the store rooted at
// the dataset inside root.
func (s *Server) datasetStore(ctx context.Context, rootName, dataset string) (*root, *store.Store, error) {
	r, err := s.root(rootName)
	if err != nil {
		return nil, nil, err
	}
	if err := coordapi.ValidateDatasetName(dataset); err != nil {
		s.m.rejected.WithLabelValues("invalid_dataset_name").Inc()
		return nil, nil, err
	}
	st, err := r.st.Sub(dataset)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", coordapi.ErrInvalidDatasetName, err)
	}
	// Nothing the coordinator touches may lead out of the root through a
	// symbolic link: the dataset's own path and its table folders.
	for _, dir := range tableFolders() {
		if err := st.CheckNoSymlinks(dir); err != nil {
			return nil, nil, &httpError{status: http.StatusBadRequest, code: coordapi.CodeInvalidDatasetName, msg: fmt.Sprintf("dataset %q: %v", dataset, err)}
		}
	}
	// A table inside another table is destroyed by the outer one's cleanup.
	segs := strings.Split(dataset, "/")
	for k := 1; k < len(segs); k++ {
		outer := strings.Join(segs[:k], "/")
		if isTable, err := hasObjects(ctx, r.st, outer+"/"+manifest.VersionsDir+"/"); err != nil {
			return nil, nil, err
		} else if isTable {
			return nil, nil, &httpError{status: http.StatusBadRequest, code: coordapi.CodeInvalidDatasetName,
				msg: fmt.Sprintf("dataset %q lies inside the table %q (whose cleanup would delete it)", dataset, outer)}
		}
	}
	return r, st, nil
}

// tableFolders returns the folders of a table the coordinator reads or writes.
func tableFolders() []string {
	return []string{manifest.VersionsDir, manifest.DataDir, manifest.TransactionsDir, "_deletions", "_indices", "_refs", "tree"}
}

// hasObjects reports whether any object lies under prefix.
func hasObjects(ctx context.Context, st *store.Store, prefix string) (bool, error) {
	it := st.Bucket().List(&blob.ListOptions{Prefix: st.KeyPrefix() + prefix})
	_, err := it.Next(ctx)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list %s: %w", prefix, err)
	}
	return true, nil
}

// routes builds the handler tree.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, s.authenticated(h)) }
	api("POST "+coordapi.PathCommit, s.handleCommit)
	api("GET "+coordapi.PathRoots, s.handleRoots)
	api("GET "+coordapi.PathDataset, s.handleSummary)
	api("GET "+coordapi.PathVersions, s.handleVersions)
	api("GET "+coordapi.PathTags, s.handleListTags)
	api("POST "+coordapi.PathTags, s.handleCreateTag)
	api("DELETE "+coordapi.PathTag, s.handleDeleteTag)
	api("POST "+coordapi.PathEnableSeeds, s.handleEnableSeeds)
	mux.Handle("GET "+coordapi.PathMetrics, s.authenticated(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelError), Registry: s.reg})))
	mux.HandleFunc("GET "+coordapi.PathHealth, s.handleHealth)
	// paths knows every path without its method, to tell 405 from 404.
	paths := http.NewServeMux()
	for _, p := range []string{coordapi.PathCommit, coordapi.PathRoots, coordapi.PathDataset, coordapi.PathVersions, coordapi.PathTags,
		coordapi.PathTag, coordapi.PathEnableSeeds, coordapi.PathMetrics, coordapi.PathHealth} {
		paths.Handle(p, http.NotFoundHandler())
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := paths.Handler(r); pattern != "" {
			s.writeError(w, r, &httpError{status: http.StatusMethodNotAllowed, code: coordapi.CodeMethodNotAllowed, msg: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.EscapedPath())})
			return
		}
		s.writeError(w, r, &httpError{status: http.StatusNotFound, code: coordapi.CodeNotFound, msg: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.EscapedPath())})
	})
	return s.observed(mux)
}

// statusWriter records the status code written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observed assigns a request id, and logs and measures every request.
func (s *Server) observed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(coordapi.HeaderRequestID)
		if id == "" || len(id) > 128 || strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			id = s.idBase + "-" + strconv.FormatUint(s.idSeq.Add(1), 10)
		}
		w.Header().Set(coordapi.HeaderRequestID, id)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		route := r.Pattern
		if route == "" || route == "/" {
			route = "other"
		}
		d := time.Since(start)
		s.m.requestTime.WithLabelValues(route, strconv.Itoa(sw.status)).Observe(d.Seconds())
		level := slog.LevelDebug
		if sw.status >= 500 {
			level = slog.LevelError
		} else if sw.status == http.StatusUnauthorized || sw.status == http.StatusTooManyRequests {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "request", "id", id, "method", r.Method, "path", r.URL.EscapedPath(),
			"status", sw.status, "ms", float64(d.Microseconds())/1000, "remote", r.RemoteAddr)
	})
}

// authenticated requires a configured bearer token (when any is
// configured). Tokens are compared as SHA-256 digests in constant time,
// against every configured token.
func (s *Server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.tokens) > 0 && !s.authorized(r.Header.Get("Authorization")) {
			s.m.rejected.WithLabelValues("unauthorized").Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="lancekeeper"`)
			s.writeError(w, r, &httpError{status: http.StatusUnauthorized, code: coordapi.CodeUnauthorized, msg: "missing or invalid bearer token"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authorized(header string) bool {
	const prefix = "bearer "
	if len(header) <= len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(header[len(prefix):])))
	ok := 0
	for _, t := range s.tokens {
		ok |= subtle.ConstantTimeCompare(got[:], t[:])
	}
	return ok == 1
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// readBody reads a JSON request body within the size limit and decodes it
// strictly into v. An empty body leaves v alone when optional is set.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	data, err := s.body(w, r)
	if err != nil {
		return err
	}
	if optional && len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	return decodeStrict(data, v)
}

// body returns the request body, refusing a non-JSON content type (415)
// and bodies beyond MaxBodyBytes (413).
func (s *Server) body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := strings.Cut(ct, ";")
		if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
			return nil, &httpError{status: http.StatusUnsupportedMediaType, code: coordapi.CodeUnsupportedMedia, msg: fmt.Sprintf("Content-Type %q: the body must be application/json", ct)}
		}
	}
	data, err := readLimited(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.m.rejected.WithLabelValues("body_too_large").Inc()
			return nil, &httpError{status: http.StatusRequestEntityTooLarge, code: coordapi.CodeBodyTooLarge, msg: fmt.Sprintf("request body exceeds %d bytes", mbe.Limit)}
		}
		return nil, fmt.Errorf("%w: reading the body: %v", errBadRequest, err)
	}
	return data, nil
}

func readLimited(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	defer body.Close()
	return io.ReadAll(body)
}
