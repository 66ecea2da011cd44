package commit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// Mode says how WriteArrow treats an existing dataset.
type Mode int

const (
	// ModeCreate creates a new dataset; an existing one is ErrDatasetExists.
	ModeCreate Mode = iota
	// ModeAppend adds fragments to an existing dataset.
	ModeAppend
	// ModeOverwrite replaces the table (creating the dataset if needed).
	ModeOverwrite
)

func (m Mode) String() string {
	switch m {
	case ModeCreate:
		return "create"
	case ModeAppend:
		return "append"
	case ModeOverwrite:
		return "overwrite"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "create", "append" or "overwrite".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "create":
		return ModeCreate, nil
	case "append":
		return ModeAppend, nil
	case "overwrite":
		return ModeOverwrite, nil
	}
	return 0, fmt.Errorf("unknown write mode %q (want create, append or overwrite)", s)
}

// DefaultMaxRowsPerFile is the largest number of rows WriteArrow puts in one
// data file (Lance's default, 1 Mi rows).
const DefaultMaxRowsPerFile = 1 << 20

// ErrSchemaMismatch is wrapped when the input's schema does not match the
// dataset's.
var ErrSchemaMismatch = errors.New("schema mismatch")

// WriteOptions configures WriteArrow.
type WriteOptions struct {
	Mode Mode
	// SeedColumns names the top-level columns that get v1 zone write seeds;
	// SeedAllColumns seeds every top-level column. Off by default. Seeds
	// are written only when the dataset already carries
	// FLAG_ZONE_WRITE_SEEDS or Commit.EnableZoneWriteSeeds, the one opt-in
	// switch, is set (R56); WriteFragments checks it before writing.
	SeedColumns    []string
	SeedAllColumns bool
	// RowsPerZone of the seeds (0 = 8192).
	RowsPerZone uint64
	// MaxBoundBytes truncates string/binary bounds (0 = 64).
	MaxBoundBytes int
	// NoDeclaredSeeds ignores the ZoneMap indices of the dataset that ask
	// for seeds (DeclaredSeedColumns). By default an append honours them as
	// Lance 12 does: each declared column gets a seed with the index's rows
	// per zone — version 1 when the dataset carries FLAG_ZONE_WRITE_SEEDS
	// (or this write activates it), else version 0, the layout Lance 12
	// writes and reads, so the table stays readable by Lance 12.
	NoDeclaredSeeds bool
	// MaxRowsPerFile bounds the rows of one data file (0 = 1 Mi); each data
	// file is one fragment.
	MaxRowsPerFile int
	// PageSize is the data-file page size (0 = datafile.DefaultPageSize).
	PageSize int
	// StableRowIDs creates the dataset with stable row ids (create and
	// overwrite-creating only).
	StableRowIDs bool
	// Config is upserted into the table config by create and overwrite.
	Config map[string]string
	// DataStorageVersion is the data storage version of the files written:
	// "2.0", "2.1", "2.2" ("stable") or "2.3" ("next"; Lance 12's unstable
	// version, whose files hold 2.2's encodings). Create defaults to "2.2"
	// (Lance 12's default); append always writes the table's version (a
	// different value is an error) and overwrite keeps the table's version
	// unless this is set. Legacy ("0.1", Lance v1 files) tables are refused
	// with ErrStorageVersion.
	DataStorageVersion string
	// ReplaceSchema lets an overwrite replace the table's schema with the
	// input's. By default an overwrite keeps the table's schema (types,
	// nullability, field ids) and the input must match it as for an append.
	ReplaceSchema bool
	// Commit tunes the commit (retries, requirements, …).
	Commit Options
	// Progress, when set, is called after every record batch with the
	// number of rows written so far.
	Progress func(rows int64)
}

// WrittenFile describes one data file WriteArrow wrote.
type WrittenFile struct {
	Path  string // relative to the dataset root, e.g. data/<name>.lance
	Rows  uint64
	Bytes uint64
	Seeds []datafile.SeedResult
}

// WriteResult is the outcome of WriteArrow.
type WriteResult struct {
	*Result
	Rows  int64
	Files []WrittenFile
}

// NewDataFileName returns a fresh data-file name in Lance's current form
// (§4.8): 16 random bytes, the first 3 as 24 binary digits and the other 13
// as 26 lower-case hex digits, then ".lance".
func NewDataFileName() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	var sb strings.Builder
	for _, c := range b[:3] {
		fmt.Fprintf(&sb, "%08b", c)
	}
	sb.WriteString(hex.EncodeToString(b[3:]))
	sb.WriteString(".lance")
	return sb.String()
}

// pbFields converts a data-file schema to the manifest's Field list.
func pbFields(s *datafile.Schema) []*pb.Field {
	out := make([]*pb.Field, 0, len(s.Fields))
	for _, f := range s.Fields {
		pf := &pb.Field{
			Name: f.Name, Id: f.ID, ParentId: f.ParentID, LogicalType: f.LogicalType, Nullable: f.Nullable,
			Encoding: pb.Encoding(f.Encoding), ExtensionName: f.ExtensionName,
			UnenforcedPrimaryKey: f.UnenforcedPrimaryKey, UnenforcedPrimaryKeyPosition: f.UnenforcedPrimaryKeyPosition,
		}
		if len(f.Metadata) > 0 {
			pf.Metadata = map[string][]byte{}
			for k, v := range f.Metadata {
				pf.Metadata[k] = []byte(v)
			}
		}
		out = append(out, pf)
	}
	return out
}

// subtree returns the fields of the subtree rooted at fields[i] (pre-order:
// a parent precedes its children, so the subtree is every later field whose
// ancestor chain reaches fields[i]).
func subtree(fields []*pb.Field, i int) []*pb.Field {
	in := map[int32]bool{fields[i].GetId(): true}
	out := []*pb.Field{fields[i]}
	for _, f := range fields[i+1:] {
		if in[f.GetParentId()] {
			in[f.GetId()] = true
			out = append(out, f)
		}
	}
	return out
}

// planAppend matches the input schema to the dataset's: same top-level
// names (any order), identical nested shape and logical types, nullable
// input only into nullable fields (non-nullable input is fine anywhere; a
// non-nullable dataset field accepts a nullable input column and the
// writer then refuses actual nulls). It returns the writer schema (columns
// in dataset order, dataset nullability at the top level), the column
// permutation, and the field ids in pre-order. The logical types are
// compared by checkAppendTypes once a data-file writer of the schema
// exists (writeFragments).
func planAppend(in *arrow.Schema, ds []*pb.Field) (*arrow.Schema, []int, []int32, error) {
	var tops []int
	for i, f := range ds {
		if f.GetParentId() == -1 {
			tops = append(tops, i)
		}
	}
	inIdx := make(map[string]int, in.NumFields())
	for i := range in.NumFields() {
		inIdx[in.Field(i).Name] = i
	}
	if in.NumFields() != len(inIdx) {
		return nil, nil, nil, fmt.Errorf("%w: the input has duplicate column names", ErrSchemaMismatch)
	}
	var perm []int
	var fields []arrow.Field
	var ids []int32
	for _, ti := range tops {
		name := ds[ti].GetName()
		j, ok := inIdx[name]
		if !ok {
			return nil, nil, nil, fmt.Errorf("%w: the dataset has column %q, the input does not", ErrSchemaMismatch, name)
		}
		delete(inIdx, name)
		f := in.Field(j)
		f.Nullable = ds[ti].GetNullable()
		perm = append(perm, j)
		fields = append(fields, f)
		for _, sf := range subtree(ds, ti) {
			ids = append(ids, sf.GetId())
		}
	}
	for name := range inIdx {
		return nil, nil, nil, fmt.Errorf("%w: the input has column %q, the dataset does not", ErrSchemaMismatch, name)
	}
	md := in.Metadata()
	return arrow.NewSchema(fields, &md), perm, ids, nil
}

// checkAppendTypes compares the Lance logical types a data-file writer
// records for the planned schema (got) with the dataset's fields.
func checkAppendTypes(got []datafile.Field, ds []*pb.Field) error {
	byID := make(map[int32]*pb.Field, len(ds))
	for _, f := range ds {
		byID[f.GetId()] = f
	}
	for _, g := range got {
		want := byID[g.ID]
		if want == nil || want.GetName() != g.Name {
			return fmt.Errorf("%w: nested field %q of the input has no counterpart in the dataset", ErrSchemaMismatch, g.Name)
		}
		if want.GetLogicalType() != g.LogicalType {
			return fmt.Errorf("%w: column %q is %s in the dataset but %s in the input", ErrSchemaMismatch, g.Name, want.GetLogicalType(), g.LogicalType)
		}
		if g.ParentID != -1 && g.Nullable && !want.GetNullable() {
			return fmt.Errorf("%w: nested field %q is nullable in the input but not in the dataset", ErrSchemaMismatch, g.Name)
		}
	}
	return nil
}

// probeSchema creates the first data file's writer (which is also the
// check of the schema and the seed columns before anything is written),
// writing into a file of st that is created only when the writer first
// writes (lazyFile): a write that fails before any data is written leaves
// nothing behind. With keep, the dataset's fields (an append, or an
// overwrite keeping the table's schema) must match the writer's logical
// types; every schema error then wraps ErrSchemaMismatch as before.
func probeSchema(ctx context.Context, out *WrittenFiles, schema *arrow.Schema, wopts datafile.WriterOptions, keep []*pb.Field, mode Mode) (*datafile.Writer, *lazyFile, error) {
	hint := func(err error) error { return err }
	if mode == ModeOverwrite {
		hint = overwriteKeepsSchema
	}
	sink := out.newLazyFile(ctx)
	w, err := datafile.NewWriter(sink, schema, wopts)
	if err != nil {
		if keep != nil {
			// What the schema alone (no seed options) gives: a writer
			// refusing it, or other logical types, is a schema mismatch.
			bare, berr := datafile.NewWriter(io.Discard, schema, datafile.WriterOptions{FieldIDs: wopts.FieldIDs, Version: wopts.Version})
			if berr != nil {
				return nil, nil, hint(fmt.Errorf("%w: %w", ErrSchemaMismatch, berr))
			}
			if terr := checkAppendTypes(bare.Schema().Fields, keep); terr != nil {
				return nil, nil, hint(terr)
			}
		}
		// The writer's typed error (datafile.ErrInvalidSchema, naming the
		// field and the storage version), for every mode.
		return nil, nil, err
	}
	if keep != nil {
		if err := checkAppendTypes(w.Schema().Fields, keep); err != nil {
			return nil, nil, hint(err)
		}
	}
	return w, sink, nil
}

// overwriteKeepsSchema adds to a schema mismatch of an overwrite how to
// replace the table's schema.
func overwriteKeepsSchema(err error) error {
	return fmt.Errorf("%w (an overwrite keeps the table's schema; replace it explicitly with --replace-schema / WriteOptions.ReplaceSchema)", err)
}

// WrittenFiles is the outcome of WriteFragments: data files written into
// a dataset and not committed yet, with what a transaction needs to
// reference them.
type WrittenFiles struct {
	// Mode is the write mode the files were written for.
	Mode Mode
	// ReadVersion is the latest version when the write began, the one the
	// files were planned against (0: the dataset did not exist).
	ReadVersion uint64
	// Rows is the number of rows written.
	Rows int64
	// Files are the data files, one per fragment, in input order.
	Files []WrittenFile
	// Fragments reference Files (paths relative to data/, ids unassigned).
	Fragments []*pb.DataFragment
	// Schema is the schema of the files as manifest fields: the dataset's
	// own for an append, the new table schema for create and overwrite.
	Schema []*pb.Field
	// SchemaMetadata is the input's schema metadata without seed locator
	// keys (the table's schema metadata for create and overwrite).
	SchemaMetadata map[string][]byte

	st Store
	// unsynced are data files written deferred (commit/durable.go).
	unsynced []string
	// head is the manifest the files were planned against (nil: none).
	head     *manifest.File
	headInfo manifest.VersionInfo
}

// Cleanup deletes the data files that no version references, best effort
// (also after ctx is cancelled): for files whose commit was definitely
// refused. It first reads every version committed after ReadVersion and
// keeps every file one of them references (a commit whose answer was lost
// may have landed after all, issue 15 item 1); when the versions cannot be
// read it deletes nothing. It returns the number of files deleted.
func (w *WrittenFiles) Cleanup(ctx context.Context) int {
	ctx = context.WithoutCancel(ctx)
	if len(w.Files) == 0 {
		return 0
	}
	if _, found, err := w.Landed(ctx); err != nil || found {
		return 0
	}
	n := 0
	for _, f := range w.Files {
		if w.st.Delete(ctx, f.Path) == nil {
			n++
		}
	}
	return n
}

// Landed looks for the files in every version committed after
// ReadVersion and returns the first version that references one of them
// (found=false when none does). It is how a writer whose commit outcome is
// unknown (a lost answer, a timeout, a cancellation) finds out whether the
// commit landed: data file names are random UUIDs, so a version that
// references one is the commit of these files (or of a batch holding them).
func (w *WrittenFiles) Landed(ctx context.Context) (version uint64, found bool, err error) {
	want := make(map[string]bool, len(w.Files))
	for _, f := range w.Files {
		want[strings.TrimPrefix(f.Path, manifest.DataDir+"/")] = true
	}
	d := &dataset{st: w.st, root: w.st.KeyPrefix(), files: map[uint64]*manifest.File{}}
	info, err := d.latest(ctx)
	if err != nil {
		return 0, false, err
	}
	for v := w.ReadVersion + 1; v <= info.Version; v++ {
		f, err := manifest.ReadVersion(ctx, w.st.Bucket(), w.st.KeyPrefix(), v)
		if manifest.IsNotFound(err) {
			continue // a gap (cleaned up) cannot hold our files: they are newer
		}
		if err != nil {
			return 0, false, err
		}
		for _, fr := range f.Manifest.GetFragments() {
			for _, df := range fr.GetFiles() {
				if df.BaseId == nil && want[df.GetPath()] {
					return v, true, nil
				}
			}
		}
	}
	return 0, false, nil
}

// hasV1Seeds reports whether f carries valid v1 seeds.
func (f WrittenFile) hasV1Seeds() bool {
	for _, s := range f.Seeds {
		if s.BufferIndex != 0 && s.Err == nil && s.Version == 1 {
			return true
		}
	}
	return false
}

// fileSink writes one data file to the store.
type fileSink struct {
	path string
	rows uint64
	w    *datafile.Writer
	out  interface {
		io.Writer
		Close() error
		Abort() error
	}
}

// WriteArrow writes the record batches of rdr as data files of the table's
// data storage version (2.0, 2.1 or 2.2; for a new table
// opts.DataStorageVersion, default 2.2) — one fragment per file, at most
// MaxRowsPerFile rows each — with the requested v1 zone write seeds, then
// commits them as an Append, or as an Overwrite for create and overwrite.
// Nothing is committed on any error; data files already written are
// deleted on a best-effort basis.
func WriteArrow(ctx context.Context, st Store, rdr array.RecordReader, opts WriteOptions) (*WriteResult, error) {
	// Refuse an unsafe store before writing any data file.
	if err := requireAtomicCreate(st, opts.Commit.AllowUnsafeCommit); err != nil {
		return nil, err
	}
	w, err := writeFragments(ctx, st, rdr, opts)
	if err != nil {
		return nil, err
	}
	var txn *Transaction
	if w.Mode == ModeAppend {
		// w is this call's own: the transaction takes its fragments
		// without a copy (w.Fragments is read below for paths only).
		txn = newAppendOwning(w.ReadVersion, w.Fragments)
	} else {
		txn = NewOverwrite(w.ReadVersion, OverwriteSpec{Fragments: w.Fragments, Schema: w.Schema, SchemaMetadata: w.SchemaMetadata,
			ConfigUpserts: opts.Config, StableRowIDs: opts.StableRowIDs})
	}
	for i, f := range w.Files {
		txn.MarkSeedFiles(f.hasV1Seeds(), w.Fragments[i].GetFiles()[0].GetPath())
	}
	txn.pending = append(txn.pending, pendingFrom(st, w.unsynced)...) // made durable by the commit point
	txn.known, txn.knownInfo = w.head, w.headInfo                     // versions are immutable: no second read
	r, err := Commit(ctx, st, txn, opts.Commit)
	if err != nil {
		if !errors.Is(err, ErrCommitOutcomeUnknown) {
			w.Cleanup(ctx)
		}
		return nil, err
	}
	return &WriteResult{Result: r, Rows: w.Rows, Files: w.Files}, nil
}

// WriteFragments is the first half of WriteArrow: it writes the record
// batches of rdr into st as data files of the table's storage version (one fragment per file, at
// most opts.MaxRowsPerFile rows each) with the requested v1 zone write
// seeds, and commits nothing. Before writing anything it checks against
// the latest version that opts.Mode applies (ErrDatasetExists,
// ErrDatasetNotFound), that the dataset's feature flags allow writing,
// that seeds are enabled (ErrSeedsNotEnabled) and, for an append, that the
// input matches the dataset's schema (ErrSchemaMismatch); an append of no
// rows is an ErrInvalidTransaction. Of opts.Commit only EnableZoneWriteSeeds
// (the seed opt-in) is used.
//
// On error the data files already written are deleted on a best-effort
// basis. On success the caller owns them: commit them (WriteArrow does;
// coordclient sends them to a coordinator) or Cleanup them.
func WriteFragments(ctx context.Context, st Store, rdr array.RecordReader, opts WriteOptions) (*WrittenFiles, error) {
	w, err := writeFragments(ctx, st, rdr, opts)
	if err != nil {
		return nil, err
	}
	if err := w.syncPending(ctx); err != nil {
		w.Cleanup(ctx)
		return nil, err
	}
	return w, nil
}

// writeFragments is WriteFragments leaving the data files it wrote deferred
// (WrittenFiles.unsynced) for the commit point to make durable.
func writeFragments(ctx context.Context, st Store, rdr array.RecordReader, opts WriteOptions) (written *WrittenFiles, err error) {
	if opts.MaxRowsPerFile <= 0 {
		opts.MaxRowsPerFile = DefaultMaxRowsPerFile
	}
	seeding := opts.SeedAllColumns || len(opts.SeedColumns) > 0
	d := &dataset{st: st, root: st.KeyPrefix(), files: map[uint64]*manifest.File{}}
	head, info, err := d.loadLatest(ctx)
	if err != nil {
		return nil, err
	}
	if info.Version != 0 {
		m := head.Manifest
		if err := flags.CheckWrite(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()); err != nil {
			return nil, fmt.Errorf("%s version %d: %w", st, info.Version, err)
		}
	}
	switch {
	case opts.Mode == ModeCreate && head != nil:
		return nil, fmt.Errorf("%w: %s has version %d (use mode append or overwrite)", ErrDatasetExists, st, info.Version)
	case opts.Mode == ModeAppend && head == nil:
		return nil, fmt.Errorf("%w: %s has no manifest (use mode create)", ErrDatasetNotFound, st)
	}
	// Before the seed opt-in advice: enabling seeds on a table whose files
	// this build cannot write would lock Lance out for nothing (issue 15
	// item 17).
	if _, err := chooseStorageVersion(opts, head); err != nil {
		return nil, err
	}
	if seeding && !opts.Commit.EnableZoneWriteSeeds && (head == nil || !HasZoneWriteSeeds(head.Manifest)) {
		return nil, fmt.Errorf("%w: writing v1 seeds would set FLAG_ZONE_WRITE_SEEDS, which old Lance readers refuse; enable it explicitly (--enable-zone-write-seeds, `lancekeeper seeds enable`, or WriteOptions.Commit.EnableZoneWriteSeeds)", ErrSeedsNotEnabled)
	}

	in := rdr.Schema()
	wopts := datafile.WriterOptions{
		PageSize: opts.PageSize, SeedColumns: opts.SeedColumns, SeedAllColumns: opts.SeedAllColumns,
		Seed: seedio.CollectorOptions{RowsPerZone: opts.RowsPerZone, MaxBoundBytes: opts.MaxBoundBytes},
	}
	if opts.Mode == ModeAppend && !opts.NoDeclaredSeeds {
		// ZoneMap indices asking for seeds (an overwrite drops every index).
		if declared := DeclaredSeedColumns(head.Manifest, head.Indices()); len(declared) > 0 {
			wopts.SeedRowsPerZone = declared
			wopts.SeedColumns = append([]string(nil), opts.SeedColumns...)
			for c := range declared {
				wopts.SeedColumns = append(wopts.SeedColumns, c)
			}
			slices.Sort(wopts.SeedColumns)
			wopts.SeedColumns = slices.Compact(wopts.SeedColumns)
			// v1 only on a flagged table or with the explicit opt-in that
			// an explicit v1 seed request needs anyway (R56).
			wopts.SeedVersion0 = !seeding && !HasZoneWriteSeeds(head.Manifest)
		}
	}
	if wopts.Version, err = chooseStorageVersion(opts, head); err != nil {
		return nil, err
	}
	writeSchema := in
	var perm []int
	var keep []*pb.Field
	keepSchema := opts.Mode == ModeAppend || (opts.Mode == ModeOverwrite && head != nil && !opts.ReplaceSchema)
	if keepSchema {
		keep = head.Manifest.GetFields()
		if writeSchema, perm, wopts.FieldIDs, err = planAppend(in, keep); err != nil {
			if opts.Mode == ModeOverwrite {
				return nil, overwriteKeepsSchema(err)
			}
			return nil, err
		}
	}
	out := &WrittenFiles{Mode: opts.Mode, ReadVersion: info.Version,
		SchemaMetadata: tableSchemaMetadata(in.Metadata()), st: st, head: head, headInfo: info}
	// Validate the schema and the seed columns before writing anything:
	// the first data file's writer, whose file is created only when it
	// first writes.
	probe, probeSink, err := probeSchema(ctx, out, writeSchema, wopts, keep, opts.Mode)
	if err != nil {
		// The writer's typed error (datafile.ErrInvalidSchema, naming the
		// field and the storage version); a create has no table schema
		// the input could mismatch.
		return nil, err
	}
	out.Schema = pbFields(probe.Schema())
	if keepSchema && opts.Mode == ModeOverwrite {
		// The table's own fields (metadata, dictionary and all) stay.
		out.Schema = cloneFields(head.Manifest.GetFields())
		if out.SchemaMetadata == nil {
			out.SchemaMetadata = cloneBytesMap(head.Manifest.GetSchemaMetadata())
		}
	}
	var cur *fileSink
	defer func() {
		if err == nil {
			return
		}
		if cur != nil {
			_ = cur.out.Abort()
		}
		out.Cleanup(ctx)
	}()
	finish := func() error {
		r, err := cur.w.Close()
		if err != nil {
			return fmt.Errorf("data file %s: %w", cur.path, err) // the deferred cleanup aborts cur
		}
		if err := cur.out.Close(); err != nil {
			path := cur.path
			cur = nil
			return fmt.Errorf("data file %s: %w", path, err)
		}
		name := strings.TrimPrefix(cur.path, manifest.DataDir+"/")
		out.Files = append(out.Files, WrittenFile{Path: cur.path, Rows: r.NumRows, Bytes: r.FileSizeBytes, Seeds: r.Seeds})
		out.Fragments = append(out.Fragments, &pb.DataFragment{
			PhysicalRows: r.NumRows,
			Files: []*pb.DataFile{{
				Path: name, Fields: r.Fields, ColumnIndices: r.ColumnIndices,
				FileMajorVersion: r.FileMajorVersion, FileMinorVersion: r.FileMinorVersion, FileSizeBytes: r.FileSizeBytes,
			}},
		})
		cur = nil
		return nil
	}
	for rdr.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := checkInputBatch(rdr.RecordBatch())
		if err != nil {
			return nil, err
		}
		if rec != rdr.RecordBatch() {
			defer rec.Release()
		}
		if perm != nil {
			cols := make([]arrow.Array, len(perm))
			for i, j := range perm {
				cols[i] = rec.Column(j)
			}
			rec = array.NewRecordBatch(writeSchema, cols, rec.NumRows())
			defer rec.Release()
		} else if !rec.Schema().Equal(writeSchema) {
			return nil, fmt.Errorf("%w: a record batch's schema differs from the reader's", ErrSchemaMismatch)
		}
		for off := int64(0); off < rec.NumRows(); {
			if cur == nil {
				w, sink := probe, probeSink
				probe, probeSink = nil, nil
				if w == nil {
					sink = out.newLazyFile(ctx)
					if w, err = datafile.NewWriter(sink, writeSchema, wopts); err != nil {
						return nil, err
					}
				}
				cur = &fileSink{path: sink.path, w: w, out: sink}
			}
			n := min(rec.NumRows()-off, int64(opts.MaxRowsPerFile)-int64(cur.rows))
			part := rec
			if off != 0 || n != rec.NumRows() {
				part = rec.NewSlice(off, off+n)
			}
			err := cur.w.Write(part)
			if part != rec {
				part.Release()
			}
			if err != nil {
				return nil, fmt.Errorf("data file %s: %w", cur.path, err)
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
	if opts.Mode == ModeAppend && len(out.Fragments) == 0 {
		return nil, fmt.Errorf("%w: the input has no rows; nothing to append", ErrInvalidTransaction)
	}
	return out, nil
}

// chooseStorageVersion picks the storage version of the data files: the
// table's for an append (and for an overwrite unless one is asked for),
// else the one asked for, else 2.2 like Lance 12 (spec 2.1 §8.4: a table's
// files all have the table's version).
func chooseStorageVersion(opts WriteOptions, head *manifest.File) (datafile.FileVersion, error) {
	want := opts.DataStorageVersion
	if head != nil && (opts.Mode == ModeAppend || want == "") {
		tv := DataFormatVersion(head.Manifest)
		if opts.Mode == ModeAppend && want != "" && want != tv {
			return 0, fmt.Errorf("%w: the dataset's data storage version is %s; an append writes files of the table's version, not %s", ErrStorageVersion, tv, want)
		}
		want = tv
		if want == "0.1" || want == "legacy" {
			return 0, fmt.Errorf("%w: the dataset's data storage version is legacy (0.1, Lance v1 files); lancekeeper writes 2.0, 2.1, 2.2 and 2.3 data files only (upgrade the table with Lance first, or overwrite it with --data-storage-version)", ErrStorageVersion)
		}
	}
	switch want {
	case "":
		return datafile.V2_2, nil
	case "2.0":
		return datafile.V2_0, nil
	case "2.1":
		return datafile.V2_1, nil
	case "2.2", "stable": // Lance 12 resolves "stable" to 2.2
		return datafile.V2_2, nil
	case "2.3", "next": // and "next" to 2.3
		return datafile.V2_3, nil
	}
	if head != nil && opts.Mode != ModeCreate && want == DataFormatVersion(head.Manifest) {
		return 0, fmt.Errorf("%w: the dataset's data storage version is %s; lancekeeper writes 2.0, 2.1, 2.2 and 2.3 data files only", ErrStorageVersion, want)
	}
	return 0, fmt.Errorf("%w: data storage version %q; lancekeeper writes 2.0, 2.1, 2.2 and 2.3 data files", ErrStorageVersion, want)
}

// tableSchemaMetadata is the input's schema metadata as the table keeps
// it: without the seed locator keys, which belong to data files; nil when
// nothing is left.
func tableSchemaMetadata(md arrow.Metadata) map[string][]byte {
	var out map[string][]byte
	for i, k := range md.Keys() {
		if strings.HasPrefix(k, seedio.LocatorKeyPrefix) {
			continue
		}
		if out == nil {
			out = map[string][]byte{}
		}
		out[k] = []byte(md.Values()[i])
	}
	return out
}
