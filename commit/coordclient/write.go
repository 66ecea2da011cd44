package coordclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/commit/coordapi"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
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
// opts.Commit is ignored (the coordinator's settings apply); everything
// else has WriteArrow's meaning. Nothing is committed on any error; the
// data files written are deleted on a best-effort basis unless the
// outcome is unknown.
func (c *Client) WriteArrow(ctx context.Context, st commit.Store, dataset string, rdr array.RecordReader, opts commit.WriteOptions) (res *commit.WriteResult, err error) {
	if err := coordapi.ValidateDatasetName(dataset); err != nil {
		return nil, err
	}
	if opts.MaxRowsPerFile <= 0 {
		opts.MaxRowsPerFile = commit.DefaultMaxRowsPerFile
	}
	var head *manifest.File
	var readVersion uint64
	f, info, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	switch {
	case err == nil:
		head, readVersion = f, info.Version
		if err := flags.CheckWrite(f.Manifest.GetReaderFeatureFlags(), f.Manifest.GetWriterFeatureFlags()); err != nil {
			return nil, fmt.Errorf("%s version %d: %w", st, readVersion, err)
		}
	case manifest.IsNotFound(err):
	default:
		return nil, err
	}
	switch {
	case opts.Mode == commit.ModeCreate && head != nil:
		return nil, fmt.Errorf("%w: %s has version %d (use mode append or overwrite)", commit.ErrDatasetExists, st, readVersion)
	case opts.Mode == commit.ModeAppend && head == nil:
		return nil, fmt.Errorf("%w: %s has no manifest (use mode create)", commit.ErrDatasetNotFound, st)
	}
	seeding := opts.SeedAllColumns || len(opts.SeedColumns) > 0
	if seeding && !opts.EnableZoneWriteSeeds && (head == nil || !commit.HasZoneWriteSeeds(head.Manifest)) {
		return nil, fmt.Errorf("%w: writing v1 seeds would set FLAG_ZONE_WRITE_SEEDS, which old Lance readers refuse; enable it explicitly (--enable-zone-write-seeds or `lancekeeper seeds enable`)", commit.ErrSeedsNotEnabled)
	}
	wopts := datafile.WriterOptions{
		PageSize: opts.PageSize, SeedColumns: opts.SeedColumns, SeedAllColumns: opts.SeedAllColumns,
		Seed: seedio.CollectorOptions{RowsPerZone: opts.RowsPerZone, MaxBoundBytes: opts.MaxBoundBytes},
	}
	in := rdr.Schema()
	writeSchema := in
	var perm []int
	if opts.Mode == commit.ModeAppend {
		m := head.Manifest
		if v := commit.DataFormatVersion(m); v != "2.0" && m.GetReaderFeatureFlags()&flags.MixedDataFileVersions == 0 {
			return nil, fmt.Errorf("%w: the dataset's data storage version is %s; lancekeeper writes 2.0 data files only", commit.ErrInvalidTransaction, v)
		}
		if writeSchema, perm, wopts.FieldIDs, err = planAppend(in, m.GetFields()); err != nil {
			return nil, err
		}
	}
	probe, err := datafile.NewWriter(io.Discard, writeSchema, wopts)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", commit.ErrSchemaMismatch, err)
	}
	schema := commit.PBFields(probe.Schema())

	out := &commit.WriteResult{}
	var frags []*pb.DataFragment
	var cur *sink
	defer func() {
		if err == nil || errors.Is(err, commit.ErrCommitOutcomeUnknown) {
			return
		}
		if cur != nil {
			_ = cur.out.Abort()
		}
		for _, f := range out.Files {
			_ = st.Delete(context.WithoutCancel(ctx), f.Path)
		}
	}()
	finish := func() error {
		r, err := cur.w.Close()
		if err != nil {
			return fmt.Errorf("data file %s: %w", cur.path, err)
		}
		if err := cur.out.Close(); err != nil {
			path := cur.path
			cur = nil
			return fmt.Errorf("data file %s: %w", path, err)
		}
		out.Files = append(out.Files, commit.WrittenFile{Path: cur.path, Rows: r.NumRows, Bytes: r.FileSizeBytes, Seeds: r.Seeds})
		frags = append(frags, &pb.DataFragment{PhysicalRows: r.NumRows, Files: []*pb.DataFile{{
			Path: strings.TrimPrefix(cur.path, manifest.DataDir+"/"), Fields: r.Fields, ColumnIndices: r.ColumnIndices,
			FileMajorVersion: r.FileMajorVersion, FileMinorVersion: r.FileMinorVersion, FileSizeBytes: r.FileSizeBytes,
		}}})
		cur = nil
		return nil
	}
	for rdr.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec := rdr.RecordBatch()
		if perm != nil {
			cols := make([]arrow.Array, len(perm))
			for i, j := range perm {
				cols[i] = rec.Column(j)
			}
			rec = array.NewRecordBatch(writeSchema, cols, rec.NumRows())
			defer rec.Release()
		} else if !rec.Schema().Equal(writeSchema) {
			return nil, fmt.Errorf("%w: a record batch's schema differs from the reader's", commit.ErrSchemaMismatch)
		}
		for off := int64(0); off < rec.NumRows(); {
			if cur == nil {
				if cur, err = newSink(ctx, st, writeSchema, wopts); err != nil {
					return nil, err
				}
			}
			n := min(rec.NumRows()-off, int64(opts.MaxRowsPerFile)-int64(cur.rows))
			part := rec
			if off != 0 || n != rec.NumRows() {
				part = rec.NewSlice(off, off+n)
			}
			werr := cur.w.Write(part)
			if part != rec {
				part.Release()
			}
			if werr != nil {
				return nil, fmt.Errorf("data file %s: %w", cur.path, werr)
			}
			cur.rows += uint64(n)
			off += n
			out.Rows += n
			if cur.rows >= uint64(opts.MaxRowsPerFile) {
				if err := finish(); err != nil {
					return nil, err
				}
			}
		}
		if opts.Progress != nil {
			opts.Progress(out.Rows)
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	if cur != nil {
		if err := finish(); err != nil {
			return nil, err
		}
	}

	req := coordapi.CommitRequest{Dataset: dataset, ReadVersion: readVersion, EnableZoneWriteSeeds: opts.EnableZoneWriteSeeds}
	rawFrags, err := EncodeMessages(frags)
	if err != nil {
		return nil, err
	}
	if opts.Mode == commit.ModeAppend {
		if len(frags) == 0 {
			return nil, fmt.Errorf("%w: the input has no rows; nothing to append", commit.ErrInvalidTransaction)
		}
		req.Operation.Append = &coordapi.AppendOp{Fragments: rawFrags}
		req.AllowBatching = true
		req.Requirements = []coordapi.Requirement{{Type: coordapi.RequireDataFilesAbsent}}
	} else {
		rawSchema, err := EncodeMessages(schema)
		if err != nil {
			return nil, err
		}
		ow := &coordapi.OverwriteOp{Fragments: rawFrags, Schema: rawSchema, ConfigUpserts: opts.Config, StableRowIDs: opts.StableRowIDs}
		md := in.Metadata()
		for i, k := range md.Keys() {
			if strings.HasPrefix(k, seedio.LocatorKeyPrefix) {
				continue
			}
			if ow.SchemaMetadata == nil {
				ow.SchemaMetadata = map[string][]byte{}
			}
			ow.SchemaMetadata[k] = []byte(md.Values()[i])
		}
		req.Operation.Overwrite = ow
	}
	cr, err := c.Commit(ctx, req)
	if err != nil {
		return nil, err
	}
	// Read the committed version back from the client's side of the storage.
	mf, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), cr.Version)
	if err != nil {
		return nil, fmt.Errorf("the coordinator committed version %d of %q, but it cannot be read from %s (does the client write to the location the coordinator serves?): %w",
			cr.Version, dataset, st, err)
	}
	out.Result = &commit.Result{
		Version: cr.Version, ReadVersion: cr.ReadVersion, ManifestPath: cr.ManifestPath, Manifest: mf.Manifest, Indices: mf.Indices(),
		TransactionFile: cr.TransactionFile, Transaction: mf.Transaction, FragmentIDs: cr.FragmentIDs, Attempts: cr.Attempts,
	}
	return out, nil
}

// sink is one data file being written.
type sink struct {
	path string
	rows uint64
	w    *datafile.Writer
	out  interface {
		io.Writer
		Close() error
		Abort() error
	}
}

func newSink(ctx context.Context, st commit.Store, schema *arrow.Schema, wopts datafile.WriterOptions) (*sink, error) {
	path := manifest.DataDir + "/" + commit.NewDataFileName()
	sw, err := st.NewWriter(ctx, path)
	if err != nil {
		return nil, err
	}
	w, err := datafile.NewWriter(sw, schema, wopts)
	if err != nil {
		_ = sw.Abort()
		return nil, err
	}
	return &sink{path: path, w: w, out: sw}, nil
}

// planAppend matches the input schema to the dataset's (the rules of
// commit.WriteArrow's append): the same top-level names in any order, the
// same logical types, nullable nested input only into nullable fields. It
// returns the writer schema (dataset column order, dataset nullability at
// the top level), the input column of each writer column, and the field
// ids in pre-order.
func planAppend(in *arrow.Schema, ds []*pb.Field) (*arrow.Schema, []int, []int32, error) {
	inIdx := map[string]int{}
	for i, f := range in.Fields() {
		inIdx[f.Name] = i
	}
	if len(inIdx) != len(in.Fields()) {
		return nil, nil, nil, fmt.Errorf("%w: the input has duplicate column names", commit.ErrSchemaMismatch)
	}
	var perm []int
	var fields []arrow.Field
	var ids []int32
	for i, f := range ds {
		if f.GetParentId() != -1 {
			continue
		}
		j, ok := inIdx[f.GetName()]
		if !ok {
			return nil, nil, nil, fmt.Errorf("%w: the dataset has column %q, the input does not", commit.ErrSchemaMismatch, f.GetName())
		}
		delete(inIdx, f.GetName())
		af := in.Field(j)
		af.Nullable = f.GetNullable()
		perm = append(perm, j)
		fields = append(fields, af)
		// The subtree of ds[i] in pre-order.
		sub := map[int32]bool{f.GetId(): true}
		ids = append(ids, f.GetId())
		for _, g := range ds[i+1:] {
			if sub[g.GetParentId()] {
				sub[g.GetId()] = true
				ids = append(ids, g.GetId())
			}
		}
	}
	for name := range inIdx {
		return nil, nil, nil, fmt.Errorf("%w: the input has column %q, the dataset does not", commit.ErrSchemaMismatch, name)
	}
	md := in.Metadata()
	ws := arrow.NewSchema(fields, &md)
	probe, err := datafile.NewWriter(io.Discard, ws, datafile.WriterOptions{FieldIDs: ids})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %v", commit.ErrSchemaMismatch, err)
	}
	byID := map[int32]*pb.Field{}
	for _, f := range ds {
		byID[f.GetId()] = f
	}
	for _, g := range probe.Schema().Fields {
		want := byID[g.ID]
		switch {
		case want == nil || want.GetName() != g.Name:
			return nil, nil, nil, fmt.Errorf("%w: nested field %q of the input has no counterpart in the dataset", commit.ErrSchemaMismatch, g.Name)
		case want.GetLogicalType() != g.LogicalType:
			return nil, nil, nil, fmt.Errorf("%w: column %q is %s in the dataset but %s in the input", commit.ErrSchemaMismatch, g.Name, want.GetLogicalType(), g.LogicalType)
		case g.ParentID != -1 && g.Nullable && !want.GetNullable():
			return nil, nil, nil, fmt.Errorf("%w: nested field %q is nullable in the input but not in the dataset", commit.ErrSchemaMismatch, g.Name)
		}
	}
	return ws, perm, ids, nil
}
