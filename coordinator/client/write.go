package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest"
)

// WriteArrow is commit.WriteArrow with the commit sent to the coordinator:
// it writes the record batches of rdr as v2.0 data files (with the
// requested v1 zone write seeds) directly into st — the dataset's location
// as this client sees it, which must be the location the coordinator
// serves as dataset — and asks the coordinator to commit them: an Append
// (batchable, with the data_files_absent requirement) for ModeAppend, an
// Overwrite otherwise. The committed manifest is then read back from st,
// which proves that client and coordinator address the same storage.
//
// The data files are written by commit.WriteFragments, with its checks.
// opts.Commit is ignored (the coordinator's settings apply); everything
// else has WriteArrow's meaning. Nothing is committed on any error; the
// data files written are deleted on a best-effort basis unless the
// outcome is unknown.
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
		if !errors.Is(err, commit.ErrCommitOutcomeUnknown) {
			w.Cleanup(ctx)
		}
		return nil, err
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
