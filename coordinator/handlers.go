package coordinator

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net/http"
	"strconv"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// httpError is an error with its HTTP status and API code.
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// queueKey identifies a dataset's queue.
func queueKey(root, dataset string) string { return root + ":" + dataset }

func (s *Server) handleCommit(w http.ResponseWriter, r *http.Request) {
	data, err := s.body(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	req, err := DecodeCommitRequest(data)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rt, st, err := s.datasetStore(r.Context(), req.Root, req.Dataset)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.draining.Load() {
		s.m.rejected.WithLabelValues("shutting_down").Inc()
		s.writeError(w, r, errShuttingDown)
		return
	}
	cst := s.commitStore(st)
	p, err := s.buildTransaction(r.Context(), cst, req)
	if err != nil {
		s.count(req.Operation.Kind(), err)
		s.writeError(w, r, err)
		return
	}
	p.raw = st
	s.runJob(w, r, rt, req.Dataset, cst, p)
}

// commitStore is the store commits of a dataset go through.
func (s *Server) commitStore(st *store.Store) commit.Store {
	if s.cfg.wrapStore != nil {
		return s.cfg.wrapStore(st)
	}
	return st
}

// runJob queues a prepared commit on its dataset and answers with its
// outcome.
func (s *Server) runJob(w http.ResponseWriter, r *http.Request, rt *root, dataset string, st commit.Store, p *prepared) {
	j := &job{p: p, ctx: r.Context(), enqueued: time.Now(), done: make(chan jobResult, 1)}
	if err := s.enqueue(queueKey(rt.name, dataset), st, j); err != nil {
		reason := "queue_full"
		if errors.Is(err, errShuttingDown) {
			reason = "shutting_down"
		}
		s.m.rejected.WithLabelValues(reason).Inc()
		s.writeError(w, r, err)
		return
	}
	select {
	case res := <-j.done:
		s.count(p.op, res.err)
		if res.err != nil {
			s.writeError(w, r, res.err)
			return
		}
		writeJSON(w, http.StatusOK, commitResponse(rt.name, dataset, res))
	case <-r.Context().Done():
		// The caller left; the worker answers the job into its buffered
		// channel (or skips it if it had not started).
	}
}

func (s *Server) handleEnableSeeds(w http.ResponseWriter, r *http.Request) {
	var body coordapi.EnableSeedsRequest
	if err := s.readBody(w, r, &body, true); err != nil {
		s.writeError(w, r, err)
		return
	}
	name := r.PathValue("dataset")
	rt, st, err := s.datasetStore(r.Context(), r.URL.Query().Get("root"), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := &prepared{op: "enable_zone_write_seeds", enableSeeds: true,
		opts: commit.Options{MaxRetries: s.cfg.MaxRetries, AllowUnsafeCommit: s.cfg.AllowUnsafeCommit}}
	if body.ExpectedVersion != 0 {
		p.opts.Requirements = []commit.Requirement{commit.RequireLatestVersion(body.ExpectedVersion)}
	}
	p.raw = st
	s.runJob(w, r, rt, name, s.commitStore(st), p)
}

func (s *Server) handleRoots(w http.ResponseWriter, r *http.Request) {
	out := coordapi.RootsResponse{Roots: []coordapi.RootInfo{}}
	for i, rt := range s.roots {
		out.Roots = append(out.Roots, coordapi.RootInfo{Name: rt.name, URL: rt.url, Kind: string(rt.st.Kind()), Default: i == 0, AtomicCreate: rt.st.AtomicCreate()})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Retry-After", s.retryAfter())
		writeJSON(w, http.StatusServiceUnavailable, coordapi.Health{Status: "draining"})
		return
	}
	writeJSON(w, http.StatusOK, coordapi.Health{Status: "ok"})
}

// dataset opens the snapshot.Dataset a read endpoint addresses.
func (s *Server) dataset(r *http.Request) (*root, string, *snapshot.Dataset, error) {
	name := r.PathValue("dataset")
	rt, st, err := s.datasetStore(r.Context(), r.URL.Query().Get("root"), name)
	if err != nil {
		return nil, "", nil, err
	}
	return rt, name, snapshot.NewDataset(st.String(), st), nil
}

func (s *Server) handleSummary(w http.ResponseWriter, r *http.Request) {
	rt, name, d, err := s.dataset(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	snap, err := d.Checkout(r.Context(), snapshot.Options{})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sum, err := summarize(rt.name, name, snap)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

func summarize(rootName, dataset string, snap *snapshot.Snapshot) (*coordapi.DatasetSummary, error) {
	m := snap.Manifest()
	out := &coordapi.DatasetSummary{
		Dataset: dataset, Root: rootName, Version: snap.Version, ManifestPath: snap.Path, ManifestSize: snap.Size(),
		DataStorageVersion: commit.DataFormatVersion(m), Fragments: len(m.GetFragments()), MaxFragmentID: m.MaxFragmentId,
		ReaderFeatureFlags: m.GetReaderFeatureFlags(), WriterFeatureFlags: m.GetWriterFeatureFlags(),
		FeatureFlagNames: flags.Names(m.GetReaderFeatureFlags() | m.GetWriterFeatureFlags()), ZoneWriteSeeds: commit.HasZoneWriteSeeds(m),
		Fields: []coordapi.Field{}, Config: map[string]string{}, Indices: []coordapi.Index{}, Tag: m.GetTag(),
	}
	if out.FeatureFlagNames == nil {
		out.FeatureFlagNames = []string{}
	}
	if ts := m.GetTimestamp(); ts != nil {
		t := ts.AsTime().UTC()
		out.Timestamp = &t
	}
	if wv := m.GetWriterVersion(); wv != nil {
		out.WriterVersion = wv.GetLibrary() + " " + wv.GetVersion()
	}
	for _, f := range m.GetFragments() {
		var c1, c2 uint64
		out.PhysicalRows, c1 = bits.Add64(out.PhysicalRows, f.GetPhysicalRows(), 0)
		out.DeletedRows, c2 = bits.Add64(out.DeletedRows, f.GetDeletionFile().GetNumDeletedRows(), 0)
		if c1|c2 != 0 {
			return nil, fmt.Errorf("%w: version %d: the row counts of the fragments overflow 2^64 at fragment %d", manifest.ErrCorrupt, m.GetVersion(), f.GetId())
		}
	}
	for _, f := range m.GetFields() {
		out.Fields = append(out.Fields, coordapi.Field{ID: f.GetId(), ParentID: f.GetParentId(), Name: f.GetName(), LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()})
	}
	for k, v := range m.GetConfig() {
		out.Config[k] = v
	}
	for _, idx := range snap.Indices() {
		u, _ := manifest.IndexUUID(idx)
		fields := idx.GetFields()
		if fields == nil {
			fields = []int32{}
		}
		out.Indices = append(out.Indices, coordapi.Index{Name: idx.GetName(), UUID: u, Fields: fields})
	}
	return out, nil
}

// maxVersionsPage bounds one page of the versions list.
const maxVersionsPage = 10000

func (s *Server) handleVersions(w http.ResponseWriter, r *http.Request) {
	rt, name, d, err := s.dataset(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	limit, after := 1000, uint64(0)
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxVersionsPage {
			s.writeError(w, r, fmt.Errorf("%w: limit %q: want 1 to %d", errBadRequest, v, maxVersionsPage))
			return
		}
		limit = n
	}
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseUint(v, 10, 64); err != nil {
			s.writeError(w, r, fmt.Errorf("%w: after %q is not a version number", errBadRequest, v))
			return
		}
	}
	vs, err := d.Versions(r.Context(), "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := coordapi.VersionsResponse{Dataset: name, Root: rt.name, Versions: []coordapi.Version{}}
	for _, v := range vs {
		if v.Version <= after {
			continue
		}
		if len(out.Versions) == limit {
			out.NextAfter = out.Versions[len(out.Versions)-1].Version
			break
		}
		out.Versions = append(out.Versions, coordapi.Version{Version: v.Version, Path: v.Path, Size: v.Size, ModTime: v.ModTime.UTC()})
	}
	writeJSON(w, http.StatusOK, out)
}

func apiTag(t snapshot.Tag) coordapi.Tag {
	out := coordapi.Tag{Name: t.Name, Branch: t.Branch, Version: t.Version, ManifestSize: t.ManifestSize, Metadata: t.Metadata}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	if !t.CreatedAt.IsZero() {
		c := t.CreatedAt.UTC()
		out.CreatedAt = &c
	}
	if !t.UpdatedAt.IsZero() {
		u := t.UpdatedAt.UTC()
		out.UpdatedAt = &u
	}
	return out
}

func (s *Server) handleListTags(w http.ResponseWriter, r *http.Request) {
	_, _, d, err := s.dataset(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	tags, err := d.ListTags(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := coordapi.TagsResponse{Tags: []coordapi.Tag{}}
	for _, t := range tags {
		out.Tags = append(out.Tags, apiTag(t))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleCreateTag(w http.ResponseWriter, r *http.Request) {
	var body coordapi.CreateTagRequest
	if err := s.readBody(w, r, &body, false); err != nil {
		s.writeError(w, r, err)
		return
	}
	_, _, d, err := s.dataset(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := d.CreateTag(r.Context(), body.Name, snapshot.Ref{Version: body.Version}, body.Metadata)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("tag created", "dataset", r.PathValue("dataset"), "tag", t.Name, "version", t.Version)
	writeJSON(w, http.StatusCreated, apiTag(t))
}

func (s *Server) handleDeleteTag(w http.ResponseWriter, r *http.Request) {
	_, _, d, err := s.dataset(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := d.DeleteTag(r.Context(), r.PathValue("tag")); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("tag deleted", "dataset", r.PathValue("dataset"), "tag", r.PathValue("tag"))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) retryAfter() string {
	return strconv.Itoa(max(1, int((s.cfg.RetryAfter+time.Second-1)/time.Second)))
}

// classify maps an error to its HTTP status and API error body.
func (s *Server) classify(err error) (int, coordapi.ErrorBody) {
	body := coordapi.ErrorBody{Message: err.Error()}
	var he *httpError
	var ce *commit.ConflictError
	var re *commit.RequirementError
	set := func(status int, code string) (int, coordapi.ErrorBody) {
		body.Code = code
		return status, body
	}
	switch {
	case errors.As(err, &he):
		return set(he.status, he.code)
	case errors.Is(err, errQueueFull):
		return set(http.StatusTooManyRequests, coordapi.CodeTooManyRequests)
	case errors.Is(err, errShuttingDown):
		return set(http.StatusServiceUnavailable, coordapi.CodeShuttingDown)
	case errors.Is(err, coordapi.ErrInvalidDatasetName):
		return set(http.StatusBadRequest, coordapi.CodeInvalidDatasetName)
	case errors.Is(err, errBadRequest), errors.Is(err, snapshot.ErrInvalidRef), errors.Is(err, snapshot.ErrBadOptions),
		errors.Is(err, store.ErrInvalidKey):
		return set(http.StatusBadRequest, coordapi.CodeBadRequest)
	case errors.Is(err, errDataFileMissing):
		return set(http.StatusBadRequest, coordapi.CodeDataFileNotFound)
	case errors.Is(err, commit.ErrCommitOutcomeUnknown):
		return set(http.StatusInternalServerError, coordapi.CodeCommitOutcome)
	case errors.As(err, &ce):
		body.Conflict = &coordapi.ConflictInfo{Operation: ce.Op, ConcurrentOperation: ce.ConcurrentOp, Version: ce.Version, Retryable: ce.Retryable, Reason: ce.Reason}
		return set(http.StatusConflict, coordapi.CodeConflict)
	case errors.As(err, &re):
		body.Requirement = &coordapi.RequirementInfo{Requirement: re.Requirement, Latest: re.Latest, Detail: re.Detail}
		return set(http.StatusConflict, coordapi.CodeRequirementFailed)
	case errors.Is(err, commit.ErrTooManyRetries):
		return set(http.StatusConflict, coordapi.CodeTooManyRetries)
	case errors.Is(err, commit.ErrDatasetExists):
		return set(http.StatusConflict, coordapi.CodeDatasetExists)
	case errors.Is(err, manifest.ErrRefExists):
		return set(http.StatusConflict, coordapi.CodeTagExists)
	case errors.Is(err, commit.ErrDatasetNotFound):
		return set(http.StatusNotFound, coordapi.CodeDatasetNotFound)
	case errors.Is(err, manifest.ErrRefNotFound):
		return set(http.StatusNotFound, coordapi.CodeNotFound)
	case errors.Is(err, commit.ErrSeedsNotEnabled):
		return set(http.StatusBadRequest, coordapi.CodeSeedsNotEnabled)
	case errors.Is(err, commit.ErrInvalidTransaction), errors.Is(err, commit.ErrSchemaMismatch):
		return set(http.StatusBadRequest, coordapi.CodeInvalidTransaction)
	case errors.Is(err, flags.ErrUnsupported), errors.Is(err, flags.ErrHalfSet):
		return set(http.StatusConflict, coordapi.CodeUnsupported)
	case manifest.IsNotFound(err):
		return set(http.StatusNotFound, coordapi.CodeDatasetNotFound)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return set(http.StatusGatewayTimeout, coordapi.CodeTimeout)
	case errors.Is(err, store.ErrNoAtomicCreate), errors.Is(err, manifest.ErrCorrupt):
		return set(http.StatusInternalServerError, coordapi.CodeInternal)
	}
	return set(http.StatusBadGateway, coordapi.CodeStorage)
}

// writeError answers with the error's status and JSON body.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := s.classify(err)
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", s.retryAfter())
		body.RetryAfterSeconds, _ = strconv.Atoi(s.retryAfter())
	}
	if status >= 500 {
		s.log.Error("request failed", "id", w.Header().Get(coordapi.HeaderRequestID), "path", r.URL.EscapedPath(), "code", body.Code, "error", err)
	}
	writeJSON(w, status, coordapi.ErrorResponse{Error: body})
}
