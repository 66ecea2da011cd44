package maint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

// Defaults of CompactOptions, Lance's compaction defaults.
const (
	DefaultTargetRowsPerFragment = 1 << 20
	DefaultMaxRowsPerGroup       = 1024
	DefaultDeletionThreshold     = 0.1
	defaultChunkRows             = 64 << 10
	defaultMaxAttempts           = 5
)

// CompactOptions tune Compact (Lance's CompactionOptions).
type CompactOptions struct {
	// TargetRowsPerFragment: fragments with fewer live rows are merged with
	// their small neighbours, and output fragments hold at most this many
	// rows (0 = 1 Mi).
	TargetRowsPerFragment uint64
	// MaxRowsPerGroup is the number of rows written per batch (0 = 1024).
	MaxRowsPerGroup int
	// KeepDeletions turns off Lance's materialize_deletions (on by
	// default): a fragment whose deleted share exceeds DeletionThreshold is
	// rewritten without its deleted rows even when it is not small.
	KeepDeletions bool
	// DeletionThreshold is the deleted share above which deletions are
	// materialized (0 = 0.1).
	DeletionThreshold float64
	// SeedColumns / SeedAllColumns request v1 zone write seeds in the new
	// data files; on a table without FLAG_ZONE_WRITE_SEEDS they need
	// Commit.EnableZoneWriteSeeds (R56). Without them, a flagged table gets
	// fresh v1 seeds for the columns that had a seed in the rewritten files
	// or that a ZoneMap index declares; an unflagged one gets version-0
	// seeds for the declared columns only (never a relabelled buffer, R52).
	SeedColumns    []string
	SeedAllColumns bool
	// RowsPerZone of requested seeds (0 = 8192).
	RowsPerZone uint64
	// fragments restricts the rewrite to these fragment ids, each its own
	// group (seed backfill); nil plans a compaction.
	only map[uint64]bool
	// Commit tunes the commit.
	Commit commit.Options
	// MaxAttempts bounds how often a compaction preempted by a concurrent
	// commit (a retryable conflict) is planned and written again (0 = 5).
	MaxAttempts int
}

func (o CompactOptions) withDefaults() (CompactOptions, error) {
	if o.TargetRowsPerFragment == 0 {
		o.TargetRowsPerFragment = DefaultTargetRowsPerFragment
	}
	if o.MaxRowsPerGroup <= 0 {
		o.MaxRowsPerGroup = DefaultMaxRowsPerGroup
	}
	if o.DeletionThreshold == 0 {
		o.DeletionThreshold = DefaultDeletionThreshold
	}
	if o.DeletionThreshold < 0 || o.DeletionThreshold > 1 {
		return o, fmt.Errorf("%w: deletion threshold %v outside [0, 1]", ErrInvalidOptions, o.DeletionThreshold)
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = defaultMaxAttempts
	}
	return o, nil
}

// CompactResult reports a compaction.
type CompactResult struct {
	// Version is the committed version; 0 when there was nothing to do.
	Version     uint64
	ReadVersion uint64
	// Groups is the number of rewrite groups.
	Groups             int
	FragmentsRemoved   int
	FragmentsAdded     int
	FilesRemoved       int
	FilesAdded         int
	RowsWritten        uint64
	DeletedRowsDropped uint64
	// SeedFiles is the number of new data files carrying a v1 seed.
	SeedFiles int
	// Attempts counts plan-write-commit rounds (1 = no conflict).
	Attempts int
}

// Compact merges small fragments and materializes deletions as Lance's
// compact_files does, committing one Rewrite transaction (§3.7 arm 104):
// fragments are taken in id order; consecutive candidates (fewer live rows
// than the target, or a deleted share above the threshold) with the same
// index coverage form a group; a group of one fragment is rewritten only to
// drop its deletions. Each group's live rows are written, in order, to new
// data files in the table's storage version, at most
// TargetRowsPerFragment rows per fragment. With stable row ids the rows
// keep their ids and version sequences.
//
// A concurrent Delete, Update or Rewrite touching a group preempts the
// commit (retryable, §5.4); Compact then deletes its new files and plans
// again on the newer version, up to MaxAttempts times. Appends are
// compatible. Memory stays bounded by one chunk of rows (64 Ki) per
// fragment being read, whatever the fragment sizes.
func Compact(ctx context.Context, st commit.Store, opts CompactOptions) (*CompactResult, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := 1; attempt <= opts.MaxAttempts; attempt++ {
		res, err := compactOnce(ctx, st, opts)
		if res != nil {
			res.Attempts = attempt
		}
		var ce *commit.ConflictError
		if errors.As(err, &ce) && ce.Retryable {
			last = err
			continue
		}
		return res, err
	}
	return nil, fmt.Errorf("compaction preempted %d times: %w", opts.MaxAttempts, last)
}

// plan returns the rewrite groups of a compaction of m.
func plan(ctx context.Context, s *stores, m *pb.Manifest, indices []*pb.IndexMetadata, opts CompactOptions) ([][]*pb.DataFragment, error) {
	coverage := func(id uint64) string {
		var names []string
		for _, idx := range indices {
			bm := roaring.New()
			if len(idx.GetFragmentBitmap()) == 0 {
				continue
			}
			if _, err := bm.FromUnsafeBytes(idx.GetFragmentBitmap()); err == nil && id <= 0xFFFFFFFF && bm.Contains(uint32(id)) {
				u, _ := manifest.IndexUUID(idx)
				names = append(names, u)
			}
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	var groups [][]*pb.DataFragment
	if opts.only != nil {
		for _, f := range m.GetFragments() {
			if opts.only[f.GetId()] {
				groups = append(groups, []*pb.DataFragment{f})
			}
		}
		return groups, nil
	}
	var cur []*pb.DataFragment
	curKey := ""
	curDel := false
	closeBin := func() {
		if len(cur) > 1 || (len(cur) == 1 && curDel) {
			groups = append(groups, cur)
		}
		cur, curDel = nil, false
	}
	for _, f := range m.GetFragments() {
		phys := f.GetPhysicalRows()
		if phys == 0 {
			fr, err := openFragment(ctx, s, m, f)
			if err != nil {
				return nil, err
			}
			phys = fr.rows
		}
		var del uint64
		if d := f.GetDeletionFile(); d != nil {
			del = d.GetNumDeletedRows()
			if del == 0 {
				bm, err := s.deleted(ctx, f)
				if err != nil {
					return nil, err
				}
				del = bm.GetCardinality()
			}
		}
		live := phys - min(del, phys)
		manyDeleted := !opts.KeepDeletions && del > 0 && float64(del)/float64(phys) > opts.DeletionThreshold
		small := live < opts.TargetRowsPerFragment
		if !small && !manyDeleted {
			closeBin()
			continue
		}
		key := coverage(f.GetId())
		if len(cur) > 0 && key != curKey {
			closeBin()
		}
		curKey = key
		cur = append(cur, f)
		curDel = curDel || manyDeleted || (del > 0 && len(cur) > 1)
	}
	closeBin()
	return groups, nil
}

// seedPlan decides the seed options of the new data files.
func seedPlan(ctx context.Context, s *stores, m *pb.Manifest, indices []*pb.IndexMetadata, groups [][]*pb.DataFragment, opts CompactOptions) (datafile.WriterOptions, error) {
	flagged := commit.HasZoneWriteSeeds(m)
	explicit := opts.SeedAllColumns || len(opts.SeedColumns) > 0
	w := datafile.WriterOptions{Seed: seedio.CollectorOptions{RowsPerZone: opts.RowsPerZone}}
	if explicit && !flagged && !opts.Commit.EnableZoneWriteSeeds {
		return w, fmt.Errorf("%w: writing v1 seeds would set FLAG_ZONE_WRITE_SEEDS, which old Lance readers refuse; enable it explicitly (--enable-zone-write-seeds, `lancekeeper seeds enable`, or Commit.EnableZoneWriteSeeds)", commit.ErrSeedsNotEnabled)
	}
	w.SeedAllColumns = opts.SeedAllColumns
	cols := append([]string(nil), opts.SeedColumns...)
	declared := commit.DeclaredSeedColumns(m, indices)
	if len(declared) > 0 {
		w.SeedRowsPerZone = declared
		for c := range declared {
			cols = append(cols, c)
		}
	}
	if flagged && !explicit {
		// Fresh v1 seeds for every column that had a seed (any version)
		// in a rewritten file: recomputed from the values, never relabelled.
		for _, g := range groups {
			for _, f := range g {
				fr, err := openFragment(ctx, s, m, f)
				if err != nil {
					return w, err
				}
				for _, file := range fr.files {
					for k := range file.Metadata() {
						if c, ok := strings.CutPrefix(k, "lance.seed."); ok {
							cols = append(cols, c)
						}
					}
				}
			}
		}
	}
	slices.Sort(cols)
	w.SeedColumns = slices.Compact(cols)
	w.SeedVersion0 = !explicit && !flagged
	return w, nil
}

// rewriter writes one group's rows into new fragments.
type rewriter struct {
	ctx    context.Context
	st     commit.Store
	m      *pb.Manifest
	opts   CompactOptions
	wopts  datafile.WriterOptions
	stable bool

	written []string // data files written (relative to the root), for cleanup
	res     *CompactResult
	seeded  map[string]bool

	// the output fragment being written
	schema  *arrow.Schema
	w       *datafile.Writer
	out     *store.Writer
	path    string
	rows    uint64
	ids     []uint64
	created []uint64
	updated []uint64
	noVers  bool
	done    []*pb.DataFragment
	closing []*closingFile // output files closing in the background
}

func (r *rewriter) startFile(schema *arrow.Schema) error {
	r.path = manifest.DataDir + "/" + commit.NewDataFileName()
	out, err := r.st.NewWriter(r.ctx, r.path)
	if err != nil {
		return err
	}
	w, err := datafile.NewWriter(out, schema, r.wopts)
	if err != nil {
		_ = out.Abort()
		return err
	}
	r.written = append(r.written, r.path)
	r.w, r.out, r.rows = w, out, 0
	r.ids, r.created, r.updated = r.ids[:0], r.created[:0], r.updated[:0]
	return nil
}

// finishFile closes the output file being written in the background (its
// last pages are encoded and written while the next file starts) and
// hands its row id and version sequences over; at most maxClosing files
// close at a time. collect takes the results in order.
func (r *rewriter) finishFile() error {
	if r.w == nil {
		return nil
	}
	c := &closingFile{w: r.w, out: r.out, path: r.path, ids: r.ids, created: r.created, updated: r.updated, done: make(chan struct{})}
	r.w, r.ids, r.created, r.updated = nil, nil, nil, nil
	go c.close(r.stable, r.noVers)
	r.closing = append(r.closing, c)
	if len(r.closing) >= maxClosing {
		return r.collect(len(r.closing) - maxClosing + 1)
	}
	return nil
}

// maxClosing bounds the output files closing concurrently.
const maxClosing = 2

// closingFile is an output file being closed in the background.
type closingFile struct {
	w                     *datafile.Writer
	out                   *store.Writer
	path                  string
	ids, created, updated []uint64

	done chan struct{}
	wr   *datafile.WriteResult
	frag *pb.DataFragment
	err  error
}

func (c *closingFile) close(stable, noVers bool) {
	defer close(c.done)
	wr, err := c.w.Close()
	if err != nil {
		_ = c.out.Abort()
		c.err = err
		return
	}
	if err := c.out.Close(); err != nil {
		c.err = err
		return
	}
	name := strings.TrimPrefix(c.path, manifest.DataDir+"/")
	f := &pb.DataFragment{PhysicalRows: wr.NumRows, Files: []*pb.DataFile{{
		Path: name, Fields: wr.Fields, ColumnIndices: wr.ColumnIndices,
		FileMajorVersion: wr.FileMajorVersion, FileMinorVersion: wr.FileMinorVersion, FileSizeBytes: wr.FileSizeBytes,
	}}}
	if stable {
		seq, err := encodeRowIDs(c.ids)
		if err != nil {
			c.err = err
			return
		}
		f.RowIdSequence = &pb.DataFragment_InlineRowIds{InlineRowIds: seq}
		if !noVers {
			cv, err := encodeVersions(c.created)
			if err != nil {
				c.err = err
				return
			}
			u, err := encodeVersions(c.updated)
			if err != nil {
				c.err = err
				return
			}
			f.CreatedAtVersionSequence = &pb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: cv}
			f.LastUpdatedAtVersionSequence = &pb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: u}
		}
	}
	c.wr, c.frag = wr, f
}

// collect waits for the first n closing files and records them, in order.
func (r *rewriter) collect(n int) error {
	for range n {
		c := r.closing[0]
		r.closing = r.closing[1:]
		<-c.done
		if c.err != nil {
			return c.err
		}
		name := c.frag.GetFiles()[0].GetPath()
		v1 := false
		for _, s := range c.wr.Seeds {
			if s.BufferIndex != 0 && s.Version == 1 {
				v1 = true
			}
		}
		r.seeded[name] = v1
		if v1 {
			r.res.SeedFiles++
		}
		r.done = append(r.done, c.frag)
		r.res.FilesAdded++
		r.res.RowsWritten += c.wr.NumRows
	}
	return nil
}

func (r *rewriter) abort() {
	if r.w != nil {
		_ = r.out.Abort()
		r.w = nil
	}
	// Files still closing finish (or fail) before they are deleted.
	for _, c := range r.closing {
		<-c.done
	}
	r.closing = nil
}

// rewriteGroup writes the live rows of a group's fragments and returns the
// new fragments.
func (r *rewriter) rewriteGroup(s *stores, group []*pb.DataFragment) ([]*pb.DataFragment, error) {
	r.done = nil
	r.noVers = false
	for _, f := range group {
		if f.GetExternalRowIds() != nil || f.GetExternalCreatedAtVersions() != nil || f.GetExternalLastUpdatedAtVersions() != nil {
			return nil, fmt.Errorf("%w: fragment %d keeps its row id or version sequence in an external file, which this build does not rewrite", ErrCorruptFragment, f.GetId())
		}
		if r.stable && (f.GetInlineCreatedAtVersions() == nil || f.GetInlineLastUpdatedAtVersions() == nil) {
			r.noVers = true
		}
	}
	// Fragments are opened (footers, deletion vectors, and the rows of
	// small fragments) up to prefetch ahead, concurrently; they are
	// written strictly in order.
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	results := make([]chan opened, len(group))
	for i := range results {
		results[i] = make(chan opened, 1)
	}
	sem := make(chan struct{}, prefetch)
	go func() {
		for i, f := range group {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() { results[i] <- r.open(ctx, s, f) }()
		}
	}()
	for i, f := range group {
		var o opened
		select {
		case o = <-results[i]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		<-sem
		if o.err != nil {
			return nil, o.err
		}
		if err := r.copyFragment(s, f, o); err != nil {
			return nil, err
		}
	}
	if err := r.finishFile(); err != nil {
		return nil, err
	}
	if err := r.collect(len(r.closing)); err != nil {
		return nil, err
	}
	return r.done, nil
}

// prefetch is how many fragments are opened ahead of the one being written.
const prefetch = 8

// opened is a fragment ready to be copied: its reader, deletion vector,
// row id and version sequences, and, when its live rows fit in one chunk,
// those rows already read.
type opened struct {
	fr                    *fragmentReader
	del                   *roaring.Bitmap
	ids, created, updated []uint64
	fields                []arrow.Field
	cols                  []arrow.Array
	err                   error
}

func (r *rewriter) open(ctx context.Context, s *stores, f *pb.DataFragment) (o opened) {
	if o.fr, o.err = openFragment(ctx, s, r.m, f); o.err != nil {
		return o
	}
	if o.del, o.err = s.deleted(ctx, f); o.err != nil {
		return o
	}
	fr := o.fr
	if r.stable {
		if o.ids, o.err = decodeRowIDs(f.GetInlineRowIds(), fr.rows); o.err != nil {
			o.err = fmt.Errorf("fragment %d: %w", f.GetId(), o.err)
			return o
		}
		if !r.noVers {
			if o.created, o.err = decodeVersions(f.GetInlineCreatedAtVersions(), fr.rows); o.err != nil {
				o.err = fmt.Errorf("fragment %d created-at: %w", f.GetId(), o.err)
				return o
			}
			if o.updated, o.err = decodeVersions(f.GetInlineLastUpdatedAtVersions(), fr.rows); o.err != nil {
				o.err = fmt.Errorf("fragment %d last-updated-at: %w", f.GetId(), o.err)
				return o
			}
		}
	}
	if live := fr.rows - o.del.GetCardinality(); live > 0 && live <= defaultChunkRows {
		o.fields, o.cols, o.err = fr.read(ctx, liveRanges(fr.rows, o.del))
	}
	return o
}

func (r *rewriter) copyFragment(s *stores, f *pb.DataFragment, o opened) error {
	ctx := r.ctx
	fr, del, ids, created, updated := o.fr, o.del, o.ids, o.created, o.updated
	r.res.DeletedRowsDropped += del.GetCardinality()
	r.res.FilesRemoved += len(f.GetFiles())
	pre := o.cols
	defer func() { releaseAll(pre) }()
	live := liveRanges(fr.rows, del)
	liveRows := fr.rows - del.GetCardinality()
	first := true
	// Feed the live ranges in chunks that never cross an output fragment
	// boundary.
	for len(live) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		room := r.opts.TargetRowsPerFragment
		if r.w != nil {
			room -= r.rows
		}
		budget := min(uint64(defaultChunkRows), room)
		var chunk []datafile.RowRange
		var n uint64
		for len(live) > 0 && n < budget {
			rg := live[0]
			take := min(rg.Len(), budget-n)
			chunk = append(chunk, datafile.RowRange{Start: rg.Start, End: rg.Start + take})
			n += take
			if take == rg.Len() {
				live = live[1:]
			} else {
				live[0].Start += take
			}
		}
		var fields []arrow.Field
		var cols []arrow.Array
		var err error
		wasFirst := first
		first = false
		if wasFirst && pre != nil && n == liveRows {
			fields, cols, pre = o.fields, pre, nil
		} else {
			if fields, cols, err = fr.read(ctx, chunk); err != nil {
				return err
			}
		}
		if r.w == nil {
			tops := topFields(r.m)
			for i := range fields {
				fields[i].Name = tops[i].GetName()
				fields[i].Nullable = tops[i].GetNullable()
			}
			if r.schema == nil {
				r.schema = arrow.NewSchema(fields, nil)
			}
			if err := r.startFile(r.schema); err != nil {
				releaseAll(cols)
				return err
			}
		}
		rec := array.NewRecordBatch(r.schema, cols, int64(n))
		releaseAll(cols)
		err = r.writeBatches(rec)
		rec.Release()
		if err != nil {
			return err
		}
		if r.stable {
			for _, rg := range chunk {
				r.ids = append(r.ids, ids[rg.Start:rg.End]...)
				if !r.noVers {
					r.created = append(r.created, created[rg.Start:rg.End]...)
					r.updated = append(r.updated, updated[rg.Start:rg.End]...)
				}
			}
		}
		r.rows += n
		if r.rows >= r.opts.TargetRowsPerFragment {
			if err := r.finishFile(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeBatches writes rec in batches of MaxRowsPerGroup rows.
func (r *rewriter) writeBatches(rec arrow.RecordBatch) error {
	step := int64(r.opts.MaxRowsPerGroup)
	if rec.NumRows() <= step {
		return r.w.Write(rec)
	}
	for off := int64(0); off < rec.NumRows(); off += step {
		part := rec.NewSlice(off, min(off+step, rec.NumRows()))
		err := r.w.Write(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func releaseAll(a []arrow.Array) {
	for _, x := range a {
		x.Release()
	}
}

// compactOnce plans, writes and commits one compaction on the latest
// version.
func compactOnce(ctx context.Context, st commit.Store, opts CompactOptions) (*CompactResult, error) {
	head, info, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		return nil, err
	}
	m := head.Manifest
	res := &CompactResult{ReadVersion: info.Version}
	fv, err := checkWritable(m)
	if err != nil {
		return nil, err
	}
	s, err := newStores(st, m)
	if err != nil {
		return nil, err
	}
	defer s.close()
	groups, err := plan(ctx, s, m, head.Indices(), opts)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return res, nil
	}
	wopts, err := seedPlan(ctx, s, m, head.Indices(), groups, opts)
	if err != nil {
		return nil, err
	}
	wopts.FieldIDs = nil
	wopts.Version = fv
	for _, t := range topFields(m) {
		wopts.FieldIDs = append(wopts.FieldIDs, subtreeIDs(m, t.GetId())...)
	}
	rw := &rewriter{ctx: ctx, st: st, m: m, opts: opts, wopts: wopts, stable: usesStableRowIDs(m), res: res, seeded: map[string]bool{}}
	committed := false
	defer func() {
		rw.abort()
		if !committed {
			for _, p := range rw.written {
				_ = st.Delete(context.WithoutCancel(ctx), p)
			}
		}
	}()
	var rgs []commit.RewriteGroup
	for _, g := range groups {
		nf, err := rw.rewriteGroup(s, g)
		if err != nil {
			return nil, err
		}
		rgs = append(rgs, commit.RewriteGroup{Old: g, New: nf})
		res.FragmentsRemoved += len(g)
		res.FragmentsAdded += len(nf)
	}
	res.Groups = len(rgs)
	t := commit.NewRewrite(info.Version, rgs)
	for p, v1 := range rw.seeded {
		t.MarkSeedFiles(v1, p)
	}
	cr, err := commit.Commit(ctx, st, t, opts.Commit)
	if err != nil {
		if errors.Is(err, commit.ErrCommitOutcomeUnknown) {
			committed = true // the files may be referenced: never delete them
		}
		return res, err
	}
	committed = true
	res.Version = cr.Version
	return res, nil
}

// usesStableRowIDs: flag bit 1 or any fragment with a row id sequence.
func usesStableRowIDs(m *pb.Manifest) bool {
	if m.GetReaderFeatureFlags()&flags.StableRowIDs != 0 {
		return true
	}
	for _, f := range m.GetFragments() {
		if f.GetRowIdSequence() != nil {
			return true
		}
	}
	return false
}

// checkWritable refuses tables this build cannot rewrite (unknown writer
// flags, data storage versions the data-file writer does not produce) and
// returns the storage version new data files are written in: the table's.
func checkWritable(m *pb.Manifest) (datafile.FileVersion, error) {
	if err := flags.CheckWrite(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()); err != nil {
		return 0, err
	}
	switch v := commit.DataFormatVersion(m); v {
	case "2.0":
		return datafile.V2_0, nil
	case "2.1":
		return datafile.V2_1, nil
	case "2.2":
		return datafile.V2_2, nil
	case "2.3": // Lance 12's "next": 2.2's encodings, footer (2,3) (spec 2.1 §2.5)
		return datafile.V2_3, nil
	case "0.1", "legacy":
		return 0, fmt.Errorf("%w: the table's data storage version is legacy 0.1, whose data files are not Lance v2 files and which this build does not write; rewrite it with Lance first", ErrStorageVersion)
	default:
		return 0, fmt.Errorf("%w: the table's data storage version is %s; this build writes 2.0, 2.1, 2.2 and 2.3 data files", ErrStorageVersion, v)
	}
}
