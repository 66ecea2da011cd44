package zonemap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/google/uuid"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

var (
	// ErrIndexExists: create without Replace found an index of that name.
	ErrIndexExists = errors.New("zonemap: an index with that name exists")
	// ErrNoIndex: update or drop found no index of that name.
	ErrNoIndex = errors.New("zonemap: no index with that name")
	// ErrNotZoneMap: update was asked for an index that is not a ZoneMap.
	ErrNotZoneMap = errors.New("zonemap: the index is not a ZoneMap")
	// ErrUpToDate: update found no fragment the index does not cover.
	ErrUpToDate = errors.New("zonemap: the index covers every fragment")
)

// CreateOptions configure Create.
type CreateOptions struct {
	// Column is the top-level column to index.
	Column string
	// Name of the index; "" gives "<column>_idx" as Lance does.
	Name string
	// RowsPerZone is the zone size (0 = DefaultRowsPerZone).
	RowsPerZone uint64
	// Replace removes the existing segments of an index of that name in
	// the same commit; without it an existing name is ErrIndexExists.
	Replace bool
	// NoWriterSeeds records use_seeds = false in the index details: writers
	// (Lance 12 and ours) then add no seeds for the column to new files.
	NoWriterSeeds bool
	// NoSeeds reads every fragment's column even where a seed is usable.
	NoSeeds bool
	// Parallelism bounds the fragments processed at once (0 = 4).
	Parallelism int
	// Stats, when set, receives every data-file read.
	Stats *datafile.IOStats
	// Commit tunes the commit.
	Commit commit.Options
}

// Result describes a committed index change.
type Result struct {
	Name string
	// Segment is the new segment (nil for a drop).
	Segment *pb.IndexMetadata
	// Removed are the segments the commit removed.
	Removed []*pb.IndexMetadata
	// Fragments says, per indexed fragment, where its zones came from.
	Fragments []FragmentReport
	Stats     BuildStats
	// Commit is the committed version.
	Commit *commit.Result
}

// head reads the latest manifest file and applies the writer flag checks.
func head(ctx context.Context, st *store.Store) (*manifest.File, error) {
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		if manifest.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s has no manifest", commit.ErrDatasetNotFound, st)
		}
		return nil, err
	}
	m := f.Manifest
	if err := flags.CheckWrite(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()); err != nil {
		return nil, fmt.Errorf("%s version %d: %w", st, m.GetVersion(), err)
	}
	return f, nil
}

// segmentsNamed returns the segments of the index called name.
func segmentsNamed(indices []*pb.IndexMetadata, name string) []*pb.IndexMetadata {
	var out []*pb.IndexMetadata
	for _, idx := range indices {
		if idx.GetName() == name {
			out = append(out, idx)
		}
	}
	return out
}

// Create builds a ZoneMap segment of opts.Column over every fragment of
// the latest version (see BuildSegment), writes it under
// _indices/<uuid>/zonemap.lance and commits it as a CreateIndex
// transaction read at that version: IndexMetadata with the column's field
// id, the indexed fragments' bitmap, dataset_version = the read version,
// ZoneMapIndexDetails, index_version 0 and the file with its size. The
// commit follows the conflict matrix (lance-table-format.md §5.4): it is
// rebuilt on nothing and retried across compatible commits; a concurrent
// Rewrite of an indexed fragment, Overwrite or Restore makes it fail. On
// any failure the index file is deleted (unless the commit's outcome is
// unknown).
func Create(ctx context.Context, st *store.Store, opts CreateOptions) (*Result, error) {
	f, err := head(ctx, st)
	if err != nil {
		return nil, err
	}
	m := f.Manifest
	col, err := FindColumn(m, opts.Column)
	if err != nil {
		return nil, err
	}
	name := opts.Name
	if name == "" {
		name = opts.Column + "_idx"
	}
	if err := validName(name); err != nil {
		return nil, err
	}
	removed := segmentsNamed(f.Indices(), name)
	if len(removed) > 0 && !opts.Replace {
		return nil, fmt.Errorf("%w: %q (%d segment(s)) at version %d; use Replace to rebuild it", ErrIndexExists, name, len(removed), m.GetVersion())
	}
	if len(m.GetFragments()) == 0 {
		return nil, fmt.Errorf("zonemap: version %d has no fragments to index", m.GetVersion())
	}
	seg, reps, bs, err := BuildSegment(ctx, st, m, col, m.GetFragments(), BuildOptions{
		RowsPerZone: opts.RowsPerZone, NoSeeds: opts.NoSeeds, Parallelism: opts.Parallelism, Stats: opts.Stats})
	if err != nil {
		return nil, err
	}
	d := Details{RowsPerZone: seg.RowsPerZone, UseSeeds: !opts.NoWriterSeeds, HasNullBitmap: seg.NullRows != nil}
	res, err := commitSegment(ctx, st, m.GetVersion(), name, col, seg, d, removed, opts.Commit)
	if err != nil {
		return nil, err
	}
	res.Fragments, res.Stats = reps, bs
	return res, nil
}

// commitSegment writes seg and commits it (with the removals).
func commitSegment(ctx context.Context, st *store.Store, readVersion uint64, name string, col Column, seg *Segment, d Details, removed []*pb.IndexMetadata, copts commit.Options) (*Result, error) {
	data, err := EncodeSegment(seg)
	if err != nil {
		return nil, err
	}
	id := newUUID()
	key := indexDir(id) + "/" + FileName
	if err := st.CreateIfAbsent(ctx, key, data); err != nil {
		return nil, err
	}
	meta, err := Metadata(id, name, col.FieldID, readVersion, seg.Fragments(), d, int64(len(data)), time.Now())
	if err != nil {
		_ = st.Delete(context.WithoutCancel(ctx), key)
		return nil, err
	}
	cr, err := commit.Commit(ctx, st, commit.NewCreateIndex(readVersion, []*pb.IndexMetadata{meta}, removed), copts)
	if err != nil {
		if !errors.Is(err, commit.ErrCommitOutcomeUnknown) {
			_ = st.Delete(context.WithoutCancel(ctx), key)
		}
		return nil, err
	}
	return &Result{Name: name, Segment: meta, Removed: removed, Commit: cr}, nil
}

// Metadata builds the IndexMetadata of a ZoneMap segment.
func Metadata(id uuid.UUID, name string, fieldID int32, datasetVersion uint64, frags *roaring.Bitmap, d Details, size int64, now time.Time) (*pb.IndexMetadata, error) {
	frags = frags.Clone()
	frags.RunOptimize()
	bm, err := frags.ToBytes()
	if err != nil {
		return nil, err
	}
	details, err := EncodeDetails(d)
	if err != nil {
		return nil, err
	}
	ver := int32(IndexVersion)
	created := uint64(now.UnixMilli())
	return &pb.IndexMetadata{
		Uuid:           &pb.UUID{Uuid: append([]byte(nil), id[:]...)},
		Fields:         []int32{fieldID},
		Name:           name,
		DatasetVersion: datasetVersion,
		FragmentBitmap: bm,
		IndexDetails:   details,
		IndexVersion:   &ver,
		CreatedAt:      &created,
		Files:          []*pb.IndexFile{{Path: FileName, SizeBytes: uint64(size)}},
	}, nil
}

// UpdateOptions configure Update.
type UpdateOptions struct {
	// Name of the index to update.
	Name string
	// NewSegment adds a segment for the new fragments instead of rewriting
	// the index as one segment.
	NewSegment  bool
	NoSeeds     bool
	Parallelism int
	Stats       *datafile.IOStats
	Commit      commit.Options
}

// Update brings the ZoneMap index called opts.Name up to date with the
// latest version: the fragments no segment covers (appended since) are
// zoned — from their seeds where usable — and either merged with the
// existing zones into one new segment that replaces the old ones (the
// default, as Lance's optimize does), or added as one more segment
// (NewSegment). Zones of fragments that no longer exist are dropped. It
// fails with ErrUpToDate when nothing is missing.
func Update(ctx context.Context, st *store.Store, opts UpdateOptions) (*Result, error) {
	f, err := head(ctx, st)
	if err != nil {
		return nil, err
	}
	m := f.Manifest
	old := segmentsNamed(f.Indices(), opts.Name)
	if len(old) == 0 {
		return nil, fmt.Errorf("%w: %q at version %d", ErrNoIndex, opts.Name, m.GetVersion())
	}
	var d Details
	var fieldID int32
	for i, idx := range old {
		if !IsZoneMap(idx) {
			return nil, fmt.Errorf("%w: %q has details %q", ErrNotZoneMap, opts.Name, idx.GetIndexDetails().GetTypeUrl())
		}
		di, err := DecodeDetails(idx)
		if err != nil {
			return nil, err
		}
		if len(idx.GetFields()) != 1 {
			return nil, fmt.Errorf("%w: segment %d of %q covers %d fields", ErrInvalidIndex, i, opts.Name, len(idx.GetFields()))
		}
		if i == 0 {
			d, fieldID = di, idx.GetFields()[0]
		} else if di.RowsPerZone != d.RowsPerZone || idx.GetFields()[0] != fieldID {
			return nil, fmt.Errorf("%w: the segments of %q differ in column or zone size; rebuild it with create --replace", ErrInvalidIndex, opts.Name)
		}
	}
	if d.RowsPerZone == 0 {
		d.RowsPerZone = DefaultRowsPerZone
	}
	col, err := ColumnByID(m, fieldID)
	if err != nil {
		return nil, err
	}
	live := roaring.New()
	for _, fr := range m.GetFragments() {
		live.Add(uint32(fr.GetId()))
	}
	covered := roaring.New()
	for _, idx := range old {
		bm, err := fragmentBitmap(idx)
		if err != nil {
			return nil, err
		}
		covered.Or(bm)
	}
	covered.And(live)
	var missing []*pb.DataFragment
	for _, fr := range m.GetFragments() {
		if !covered.Contains(uint32(fr.GetId())) {
			missing = append(missing, fr)
		}
	}
	if len(missing) == 0 {
		return nil, fmt.Errorf("%w: %q at version %d", ErrUpToDate, opts.Name, m.GetVersion())
	}
	seg, reps, bs, err := BuildSegment(ctx, st, m, col, missing, BuildOptions{
		RowsPerZone: d.RowsPerZone, NoSeeds: opts.NoSeeds, Parallelism: opts.Parallelism, Stats: opts.Stats})
	if err != nil {
		return nil, err
	}
	var removed []*pb.IndexMetadata
	if !opts.NewSegment {
		res, err := manifest.NewResolver(m)
		if err != nil {
			return nil, err
		}
		for _, idx := range old {
			prev, err := readIndexSegment(ctx, st, res, idx, col, nil)
			if err != nil {
				return nil, fmt.Errorf("cannot extend %q: %w (add a segment with NewSegment, or rebuild with create --replace)", opts.Name, err)
			}
			if prev.RowsPerZone != seg.RowsPerZone {
				return nil, fmt.Errorf("cannot extend %q: a segment has %d rows per zone, its details %d", opts.Name, prev.RowsPerZone, seg.RowsPerZone)
			}
			merge(seg, prev, covered)
		}
		removed = old
	}
	d.HasNullBitmap = seg.NullRows != nil
	res, err := commitSegment(ctx, st, m.GetVersion(), opts.Name, col, seg, d, removed, opts.Commit)
	if err != nil {
		return nil, err
	}
	res.Fragments, res.Stats = reps, bs
	return res, nil
}

// merge adds to dst the zones (and null rows) of src's fragments in keep.
func merge(dst, src *Segment, keep *roaring.Bitmap) {
	for _, z := range src.Zones {
		if keep.Contains(uint32(z.FragmentID)) {
			dst.Zones = append(dst.Zones, z)
		}
	}
	if dst.NullRows != nil && src.NullRows == nil {
		dst.NullRows = nil
	}
	if dst.NullRows != nil {
		for id, bm := range src.NullRows {
			if keep.Contains(id) {
				dst.NullRows[id] = bm
			}
		}
	}
	sortZones(dst.Zones)
}

// fragmentBitmap decodes IndexMetadata.fragment_bitmap.
func fragmentBitmap(idx *pb.IndexMetadata) (*roaring.Bitmap, error) {
	raw := idx.GetFragmentBitmap()
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: segment %q has no fragment bitmap", ErrInvalidIndex, idx.GetName())
	}
	bm, err := decodeRoaring("fragment bitmap", raw)
	if err != nil {
		return nil, fmt.Errorf("%w: segment %q: fragment bitmap: %v", ErrInvalidIndex, idx.GetName(), err)
	}
	return bm, nil
}

// readIndexSegment reads the zonemap.lance of an index segment.
func readIndexSegment(ctx context.Context, st *store.Store, res *manifest.Resolver, idx *pb.IndexMetadata, col Column, stats *datafile.IOStats) (*Segment, error) {
	loc, err := res.IndexDir(idx)
	if err != nil {
		return nil, err
	}
	ss := store.NewBases(st)
	defer ss.Close()
	s, err := ss.Store(ctx, loc.Base)
	if err != nil {
		return nil, err
	}
	return ReadSegment(ctx, s.Bucket(), s.BucketKey(loc.Path+"/"+FileName), ReadOptions{ValueType: col.Type, Stats: stats})
}

// DropOptions configure Drop.
type DropOptions struct {
	Name   string
	Commit commit.Options
}

// Drop removes every segment of the index called opts.Name (of any type)
// with a CreateIndex transaction that only removes. Flag bits stay as they
// are: FLAG_ZONE_WRITE_SEEDS is sticky (R57). The index files are left for
// cleanup, since older versions still reference them.
func Drop(ctx context.Context, st *store.Store, opts DropOptions) (*Result, error) {
	f, err := head(ctx, st)
	if err != nil {
		return nil, err
	}
	old := segmentsNamed(f.Indices(), opts.Name)
	if len(old) == 0 {
		return nil, fmt.Errorf("%w: %q at version %d", ErrNoIndex, opts.Name, f.Manifest.GetVersion())
	}
	cr, err := commit.Commit(ctx, st, commit.NewCreateIndex(f.Manifest.GetVersion(), nil, old), opts.Commit)
	if err != nil {
		return nil, err
	}
	return &Result{Name: opts.Name, Removed: old, Commit: cr}, nil
}

// SegmentInfo describes one index segment of a version.
type SegmentInfo struct {
	Index *pb.IndexMetadata
	Name  string
	UUID  string
	// ZoneMap reports a ZoneMap segment; Details are its details then.
	ZoneMap bool
	Details Details
	// Fragments the segment covers (its fragment bitmap); nil when the
	// bitmap is missing or unreadable.
	Fragments []uint32
	// Live counts the covered fragments that exist in the version.
	Live int
	// Verified, Zones and Err: with verification, a ZoneMap segment's file
	// was read; Err says why it cannot be used.
	Verified bool
	Zones    int
	Err      error
}

// Inspect describes every index segment of the manifest file f of the
// dataset rooted at st; with verify each ZoneMap segment's file is read
// and validated (ReadSegment).
func Inspect(ctx context.Context, st *store.Store, f *manifest.File, verify bool) ([]SegmentInfo, error) {
	m := f.Manifest
	live := roaring.New()
	for _, fr := range m.GetFragments() {
		live.Add(uint32(fr.GetId()))
	}
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	var out []SegmentInfo
	for _, idx := range f.Indices() {
		si := SegmentInfo{Index: idx, Name: idx.GetName(), ZoneMap: IsZoneMap(idx)}
		si.UUID, _ = manifest.IndexUUID(idx)
		if bm, err := fragmentBitmap(idx); err == nil {
			si.Fragments = bm.ToArray()
			si.Live = int(roaring.And(bm, live).GetCardinality())
		}
		if si.ZoneMap {
			si.Details, si.Err = DecodeDetails(idx)
			if verify && si.Err == nil {
				si.Verified = true
				var col Column
				if len(idx.GetFields()) != 1 {
					si.Err = fmt.Errorf("%w: the segment covers %d fields, want 1", ErrInvalidIndex, len(idx.GetFields()))
				} else if col, si.Err = ColumnByID(m, idx.GetFields()[0]); si.Err == nil {
					var seg *Segment
					if seg, si.Err = readIndexSegment(ctx, st, res, idx, col, nil); si.Err == nil {
						si.Zones = len(seg.Zones)
						si.Err = checkCoverage(seg, idx)
					}
				}
			}
		}
		out = append(out, si)
	}
	return out, nil
}

// checkCoverage checks that a segment's zones are for the fragments its
// IndexMetadata says it covers.
func checkCoverage(seg *Segment, idx *pb.IndexMetadata) error {
	bm, err := fragmentBitmap(idx)
	if err != nil {
		return err
	}
	if got := seg.Fragments(); !got.Equals(bm) {
		return fmt.Errorf("%w: the file has zones for fragments %v but the fragment bitmap lists %v", ErrInvalidIndex, got.ToArray(), bm.ToArray())
	}
	return nil
}
