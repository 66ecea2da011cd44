package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest"
)

// WriteArrow is commit.WriteArrow with the commit sent to the coordinator:
// it writes the record batches of rdr as data files of the table's storage version (with the
// requested v1 zone write seeds) directly into st — the dataset's location
// as this client sees it, which must be the location the coordinator
// serves as dataset — and asks the coordinator to commit them: an Append
// (batchable, with the data_files_absent requirement) for ModeAppend, an
// Overwrite otherwise. The committed manifest is then read back from st,
// which proves that client and coordinator address the same storage.
//
// The data files are written by commit.WriteFragments, with its checks.
// opts.Commit is ignored (the coordinator's settings apply); everything
// else has WriteArrow's meaning.
//
// Only a definite refusal (see Refused) lets the data files be deleted,
// and even then only those no version references (WrittenFiles.Cleanup).
// Any other failure (a transport error, a cancellation, a timeout, a 5xx
// without a code that says nothing was committed) leaves the outcome
// unknown: the client then looks for its data files in the versions after
// its read version. When one references them the commit landed and
// WriteArrow returns its result as if the answer had arrived; otherwise the
// files are kept and the error wraps commit.ErrCommitOutcomeUnknown (the
// request may still be queued at the coordinator; unreferenced files are
// harmless and Lance's cleanup removes them).
func (c *Client) WriteArrow(ctx context.Context, st commit.Store, dataset string, rdr array.RecordReader, opts commit.WriteOptions) (*commit.WriteResult, error) {
	if err := coordapi.ValidateDatasetName(dataset); err != nil {
		return nil, err
	}
	w, err := commit.WriteFragments(ctx, st, rdr, opts)
	if err != nil {
		return nil, err
	}
	cr, err := c.commitWritten(ctx, dataset, w, opts)
	if err != nil {
		if Refused(err) {
			w.Cleanup(ctx)
			return nil, err
		}
		return resolveUnknown(ctx, st, dataset, w, err)
	}
	// Read the committed version back from the client's side of the storage.
	mf, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), cr.Version)
	if err != nil {
		return nil, fmt.Errorf("the coordinator committed version %d of %q, but it cannot be read from %s (does the client write to the location the coordinator serves?): %w",
			cr.Version, dataset, st, err)
	}
	return &commit.WriteResult{
		Result: &commit.Result{
			Version: cr.Version, ReadVersion: cr.ReadVersion, ManifestPath: cr.ManifestPath, Manifest: mf.Manifest, Indices: mf.Indices(),
			TransactionFile: cr.TransactionFile, Transaction: mf.Transaction, FragmentIDs: cr.FragmentIDs, Attempts: cr.Attempts,
		},
		Rows:  w.Rows,
		Files: w.Files,
	}, nil
}

// resolveLookupTimeout bounds the look-up of an unknown outcome (it runs
// even when the caller's context is cancelled).
const resolveLookupTimeout = 30 * time.Second

// resolveUnknown finds out whether the commit of w, whose answer was lost
// (cause), landed: it returns the version that references w's files, or an
// error wrapping commit.ErrCommitOutcomeUnknown with the files kept.
func resolveUnknown(ctx context.Context, st commit.Store, dataset string, w *commit.WrittenFiles, cause error) (*commit.WriteResult, error) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveLookupTimeout)
	defer cancel()
	v, found, lerr := w.Landed(lctx)
	if lerr != nil {
		return nil, fmt.Errorf("%w: %w; looking for the commit in the versions after %d failed too (%v), so the %d data files written were kept",
			commit.ErrCommitOutcomeUnknown, cause, w.ReadVersion, lerr, len(w.Files))
	}
	if !found {
		return nil, fmt.Errorf("%w: %w; no version after %d references the data files yet, so the %d files written were kept (the request may still be committed; unreferenced files are removed by Lance's cleanup)",
			commit.ErrCommitOutcomeUnknown, cause, w.ReadVersion, len(w.Files))
	}
	mf, err := manifest.ReadVersion(lctx, st.Bucket(), st.KeyPrefix(), v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w; version %d references the data files but cannot be read: %v", commit.ErrCommitOutcomeUnknown, cause, v, err)
	}
	ids := make([]uint64, 0, len(w.Fragments))
	for _, nf := range w.Fragments {
		p := nf.GetFiles()[0].GetPath()
		for _, fr := range mf.Manifest.GetFragments() {
			if len(fr.GetFiles()) > 0 && fr.GetFiles()[0].BaseId == nil && fr.GetFiles()[0].GetPath() == p {
				ids = append(ids, fr.GetId())
				break
			}
		}
	}
	return &commit.WriteResult{
		Result: &commit.Result{
			Version: v, ReadVersion: w.ReadVersion, Manifest: mf.Manifest, Indices: mf.Indices(),
			TransactionFile: mf.Manifest.GetTransactionFile(), Transaction: mf.Transaction, FragmentIDs: ids,
		},
		Rows:  w.Rows,
		Files: w.Files,
	}, nil
}

// Refused reports whether err is a definite refusal of a commit request:
// an answer of the coordinator that says nothing was (or will be)
// committed — a 4xx answer other than 408, a busy answer (429, 503), or a
// 5xx whose code says the commit never started (storage_error,
// shutting_down, timeout). Everything else — transport errors,
// cancellation, an undecodable 2xx, a 5xx without such a code
// (commit_outcome_unknown, internal, a proxy's 502) — leaves the outcome
// unknown, and the data files of the request must not be deleted before
// the versions after the read version were checked for them.
func Refused(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, commit.ErrCommitOutcomeUnknown) {
		return false
	}
	var e *Error
	if !errors.As(err, &e) {
		return false // transport error, cancellation, protocol error
	}
	switch {
	case e.Status == http.StatusRequestTimeout || e.Status == 499:
		return false
	case e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable:
		return true
	case e.Status >= 400 && e.Status < 500:
		return true
	}
	switch e.Body.Code {
	case coordapi.CodeStorage, coordapi.CodeShuttingDown, coordapi.CodeTimeout:
		return true
	}
	return false
}

// commitWritten asks the coordinator to commit the data files of w: an
// Append (batchable, with the data_files_absent requirement) or an
// Overwrite.
func (c *Client) commitWritten(ctx context.Context, dataset string, w *commit.WrittenFiles, opts commit.WriteOptions) (*coordapi.CommitResponse, error) {
	req := coordapi.CommitRequest{Dataset: dataset, ReadVersion: w.ReadVersion, EnableZoneWriteSeeds: opts.Commit.EnableZoneWriteSeeds}
	rawFrags, err := EncodeMessages(w.Fragments)
	if err != nil {
		return nil, err
	}
	if w.Mode == commit.ModeAppend {
		req.Operation.Append = &coordapi.AppendOp{Fragments: rawFrags}
		req.AllowBatching = true
		req.Requirements = []coordapi.Requirement{{Type: coordapi.RequireDataFilesAbsent}}
	} else {
		rawSchema, err := EncodeMessages(w.Schema)
		if err != nil {
			return nil, err
		}
		req.Operation.Overwrite = &coordapi.OverwriteOp{Fragments: rawFrags, Schema: rawSchema, SchemaMetadata: w.SchemaMetadata,
			ConfigUpserts: opts.Config, StableRowIDs: opts.StableRowIDs}
	}
	return c.Commit(ctx, req)
}
