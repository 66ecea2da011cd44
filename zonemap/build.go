package zonemap

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

// Source says where the zones of a fragment came from.
type Source int

const (
	// FromSeed: the zone write seed of the column's data file; no data page
	// was read.
	FromSeed Source = iota + 1
	// FromData: the column's values were read and zoned.
	FromData
	// FromAbsent: no data file of the fragment stores the column, so every
	// row is null; nothing was read.
	FromAbsent
)

func (s Source) String() string {
	switch s {
	case FromSeed:
		return "seed"
	case FromData:
		return "data"
	case FromAbsent:
		return "absent"
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// FragmentReport says how one fragment was indexed.
type FragmentReport struct {
	ID     uint64
	Rows   uint64
	Zones  int
	Source Source
	// SeedVersion is the version (0 or 1) of the seed used (FromSeed).
	SeedVersion int
	// SeedError is why the fragment's seed was not used (FromData with a
	// seed present): a validation error (R63), a v1 seed on an unflagged
	// table (E26, R61), another zone size (E24), or ErrSeedUnusable.
	SeedError error
}

// BuildStats sums up a build.
type BuildStats struct {
	Fragments  int
	FromSeeds  int
	FromData   int
	FromAbsent int
	Zones      int
	// DataBytesRead counts the bytes read from data files (footers, column
	// metadata, seed buffers and, for FromData fragments, pages).
	DataBytesRead int64
	// PageBytesRead counts the bytes of data pages read: 0 when every
	// fragment came from a seed.
	PageBytesRead int64
}

// BuildOptions configure BuildSegment.
type BuildOptions struct {
	// RowsPerZone is the zone size (0 = DefaultRowsPerZone).
	RowsPerZone uint64
	// NoSeeds reads every fragment's column even where a seed is usable
	// (for comparisons and benchmarks).
	NoSeeds bool
	// Parallelism bounds the fragments processed at once (0 = 4).
	Parallelism int
	// Stats, when set, also receives every data-file read.
	Stats *datafile.IOStats
}

// Column is the indexed column as the manifest declares it.
type Column struct {
	Name    string
	FieldID int32
	Type    arrow.DataType
}

// FindColumn looks up a top-level column of the manifest by name and checks
// that its type can be indexed.
func FindColumn(m *pb.Manifest, name string) (Column, error) {
	for _, f := range m.GetFields() {
		if f.GetParentId() != -1 || f.GetName() != name {
			continue
		}
		for _, c := range m.GetFields() {
			if c.GetParentId() == f.GetId() {
				return Column{}, fmt.Errorf("%w: column %q is nested (%s)", ErrUnsupportedType, name, f.GetLogicalType())
			}
		}
		sch := datafile.Schema{Fields: []datafile.Field{{Name: f.GetName(), ID: f.GetId(), ParentID: -1, LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()}}}
		as, err := sch.ArrowSchema()
		if err != nil {
			return Column{}, fmt.Errorf("%w: column %q: %v", ErrUnsupportedType, name, err)
		}
		dt := as.Field(0).Type
		if err := SupportedType(dt); err != nil {
			return Column{}, fmt.Errorf("column %q: %w", name, err)
		}
		return Column{Name: name, FieldID: f.GetId(), Type: dt}, nil
	}
	return Column{}, fmt.Errorf("%w: version %d has no top-level column %q", ErrNoColumn, m.GetVersion(), name)
}

// ErrNoColumn: the dataset has no such top-level column.
var ErrNoColumn = errors.New("zonemap: no such column")

// ColumnByID looks up the top-level column with field id id.
func ColumnByID(m *pb.Manifest, id int32) (Column, error) {
	for _, f := range m.GetFields() {
		if f.GetId() == id {
			if f.GetParentId() != -1 {
				return Column{}, fmt.Errorf("%w: field id %d is not a top-level column", ErrNoColumn, id)
			}
			return FindColumn(m, f.GetName())
		}
	}
	return Column{}, fmt.Errorf("%w: version %d has no field id %d", ErrNoColumn, m.GetVersion(), id)
}

// BuildSegment computes the ZoneMap segment of column col over the given
// fragments of manifest m (st is the dataset's root store). Fragments
// whose data file has a usable seed of the column with the zone size get
// their zones from it without reading a data page; the others are read
// with ReadRows. The flag pair FLAG_ZONE_WRITE_SEEDS of m decides whether
// v1 seeds may be used (R61). It writes nothing.
func BuildSegment(ctx context.Context, st *store.Store, m *pb.Manifest, col Column, frags []*pb.DataFragment, opts BuildOptions) (*Segment, []FragmentReport, BuildStats, error) {
	rpz := opts.RowsPerZone
	if rpz == 0 {
		rpz = DefaultRowsPerZone
	}
	var bs BuildStats
	if rpz > MaxRowsPerZone {
		return nil, nil, bs, fmt.Errorf("zonemap: rows per zone %d exceeds %d", rpz, uint64(MaxRowsPerZone))
	}
	if len(frags) == 0 {
		return nil, nil, bs, fmt.Errorf("zonemap: no fragments to index")
	}
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, nil, bs, err
	}
	par := opts.Parallelism
	if par <= 0 {
		par = 4
	}
	ss := store.NewBases(st)
	defer ss.Close()
	b := &builder{col: col, rpz: rpz, flagged: commit.HasZoneWriteSeeds(m), noSeeds: opts.NoSeeds, res: res, stores: ss, stats: opts.Stats, fields: m.GetFields()}

	results := make([]*fragmentZones, len(frags))
	reports := make([]FragmentReport, len(frags))
	errs := make([]error, len(frags))
	pageBytes := make([]int64, len(frags))
	var total datafile.IOStats
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, f := range frags {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i], reports[i], pageBytes[i], errs[i] = b.fragment(cctx, f, &total)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, nil, bs, fmt.Errorf("fragment %d: %w", frags[i].GetId(), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, bs, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, nil, bs, err
		}
	}
	seg := &Segment{ValueType: col.Type, RowsPerZone: rpz, NullRows: map[uint32]*roaring.Bitmap{}}
	nullsKnown := true
	for i, fz := range results {
		seg.Zones = append(seg.Zones, fz.zones...)
		if fz.nulls == nil {
			nullsKnown = false
		} else if !fz.nulls.IsEmpty() {
			seg.NullRows[uint32(frags[i].GetId())] = fz.nulls
		}
		bs.Fragments++
		bs.Zones += len(fz.zones)
		bs.PageBytesRead += pageBytes[i]
		switch reports[i].Source {
		case FromSeed:
			bs.FromSeeds++
		case FromData:
			bs.FromData++
		case FromAbsent:
			bs.FromAbsent++
		}
	}
	if !nullsKnown {
		seg.NullRows = nil
	}
	sortZones(seg.Zones)
	bs.DataBytesRead = total.Bytes.Load()
	if err := seg.Check(); err != nil {
		return nil, nil, bs, fmt.Errorf("zonemap: built segment is invalid (a bug): %w", err)
	}
	return seg, reports, bs, nil
}

// sortZones orders zones by (fragment, start).
func sortZones(zs []Zone) {
	slices.SortStableFunc(zs, func(a, b Zone) int {
		if c := cmp.Compare(a.FragmentID, b.FragmentID); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
}

type builder struct {
	col     Column
	rpz     uint64
	flagged bool
	noSeeds bool
	res     *manifest.Resolver
	stores  *store.Bases
	stats   *datafile.IOStats
	// fields: the version's schema, which legacy (0.1) files need to be read.
	fields []*pb.Field
}

// fragment computes the zones of one fragment.
func (b *builder) fragment(ctx context.Context, f *pb.DataFragment, total *datafile.IOStats) (*fragmentZones, FragmentReport, int64, error) {
	rep := FragmentReport{ID: f.GetId()}
	if f.GetId() > 0xFFFFFFFF {
		return nil, rep, 0, fmt.Errorf("zonemap: fragment id %d exceeds uint32", f.GetId())
	}
	var df *pb.DataFile
	for _, d := range f.GetFiles() {
		for _, id := range d.GetFields() {
			if id == b.col.FieldID {
				df = d
			}
		}
	}
	if df == nil {
		rows := f.GetPhysicalRows()
		if rows == 0 {
			return nil, rep, 0, fmt.Errorf("zonemap: fragment %d stores no column %q and records no physical row count", f.GetId(), b.col.Name)
		}
		rep.Rows, rep.Source = rows, FromAbsent
		fz := allNull(f.GetId(), rows, b.rpz)
		rep.Zones = len(fz.zones)
		return fz, rep, 0, nil
	}
	loc, err := b.res.DataFile(df)
	if err != nil {
		return nil, rep, 0, err
	}
	st, err := b.stores.Store(ctx, loc.Base)
	if err != nil {
		return nil, rep, 0, err
	}
	var fst datafile.IOStats
	file, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(loc.Path), datafile.OpenOptions{Size: int64(df.GetFileSizeBytes()), Stats: &fst,
		LegacyFields: b.fields, LegacyFieldIDs: df.GetFields()})
	defer func() {
		total.Bytes.Add(fst.Bytes.Load())
		total.Requests.Add(fst.Requests.Load())
		if b.stats != nil {
			b.stats.Bytes.Add(fst.Bytes.Load())
			b.stats.Requests.Add(fst.Requests.Load())
		}
	}()
	if err != nil {
		return nil, rep, 0, err
	}
	rows := file.NumRows()
	if pr := f.GetPhysicalRows(); pr != 0 && pr != rows {
		return nil, rep, 0, fmt.Errorf("zonemap: data file %s holds %d rows but fragment %d has %d", loc, rows, f.GetId(), pr)
	}
	rep.Rows = rows
	fi := -1
	for i, fld := range file.Schema().Fields {
		if fld.ID == b.col.FieldID && fld.ParentID == -1 {
			fi = i
		}
	}
	if fi < 0 {
		return nil, rep, 0, fmt.Errorf("zonemap: data file %s lists field id %d but stores no such top-level field", loc, b.col.FieldID)
	}
	fieldName := file.Schema().Fields[fi].Name
	if !b.noSeeds {
		fz, ver, serr := b.seed(ctx, file, fieldName, f.GetId())
		if serr == nil && fz != nil {
			rep.Source, rep.SeedVersion, rep.Zones = FromSeed, ver, len(fz.zones)
			return fz, rep, 0, nil
		}
		if errors.Is(serr, context.Canceled) || errors.Is(serr, context.DeadlineExceeded) {
			return nil, rep, 0, serr
		}
		rep.SeedError = serr
	}
	before := fst.Bytes.Load()
	fz, err := b.read(ctx, file, fi, f.GetId())
	if err != nil {
		return nil, rep, 0, fmt.Errorf("zonemap: reading column %q of %s: %w", b.col.Name, loc, err)
	}
	rep.Source, rep.Zones = FromData, len(fz.zones)
	return fz, rep, fst.Bytes.Load() - before, nil
}

// seed returns the zones from the column's seed in file, nil (and nil
// error) when there is none, or why it cannot be used.
func (b *builder) seed(ctx context.Context, file *datafile.File, name string, frag uint64) (*fragmentZones, int, error) {
	v, ok := file.Metadata()[seedio.LocatorKey(name)]
	if !ok {
		return nil, 0, nil
	}
	loc, err := seedio.ParseLocator(v)
	if err != nil {
		return nil, 0, err
	}
	if int64(loc.BufferIndex) >= int64(len(file.GlobalBuffers())) {
		return nil, 0, fmt.Errorf("%w: locator %q names global buffer %d, the file has %d", seedio.ErrSeedBufferMissing, v, loc.BufferIndex, len(file.GlobalBuffers()))
	}
	if loc.RowsPerZone != b.rpz {
		return nil, 0, fmt.Errorf("%w: the seed has %d rows per zone, the index %d", seedio.ErrSeedRowsPerZoneMismatch, loc.RowsPerZone, b.rpz)
	}
	buf, err := file.GlobalBuffer(ctx, int(loc.BufferIndex))
	if err != nil {
		return nil, 0, err
	}
	s, err := seedio.Decode(buf, seedio.DecodeOptions{
		RowsPerZone: loc.RowsPerZone, NumRows: file.NumRows(), ColumnType: b.col.Type,
		TableFlagged: b.flagged, ExpectRowsPerZone: b.rpz,
	})
	if err != nil {
		return nil, 0, err
	}
	fz, err := fromSeed(b.col.Type, frag, s)
	if err != nil {
		return nil, 0, err
	}
	return fz, s.Version, nil
}

// read reads the column of file and zones it with the v1 seed collector.
func (b *builder) read(ctx context.Context, file *datafile.File, fi int, frag uint64) (*fragmentZones, error) {
	rec, err := file.ReadRows(ctx, datafile.ReadRequest{Fields: []int{fi}})
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	fld := rec.Schema().Field(0)
	if !arrow.TypeEqual(fld.Type, b.col.Type) {
		return nil, fmt.Errorf("the file stores the column as %s, the table as %s", fld.Type, b.col.Type)
	}
	c, err := seedio.NewCollector(fld, seedio.CollectorOptions{RowsPerZone: b.rpz})
	if err != nil {
		return nil, err
	}
	if err := c.Observe(rec.Column(0)); err != nil {
		return nil, err
	}
	enc, err := c.Finish()
	if err != nil {
		return nil, err
	}
	if enc == nil {
		return nil, fmt.Errorf("the data file has no rows")
	}
	return fromSeed(b.col.Type, frag, &enc.Seed)
}

// newUUID returns a fresh random index segment uuid.
func newUUID() uuid.UUID { return uuid.New() }

// indexDir returns the key of a segment's directory, _indices/<uuid>.
func indexDir(id uuid.UUID) string { return manifest.IndicesDir + "/" + id.String() }

// validName reports whether an index name is acceptable: non-empty, no
// control characters, not a reserved system name.
func validName(name string) error {
	if name == "" {
		return fmt.Errorf("zonemap: empty index name")
	}
	if strings.HasPrefix(name, "__lance") {
		return fmt.Errorf("zonemap: index name %q is reserved for Lance system indices", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("zonemap: index name %q has a control character", name)
		}
	}
	return nil
}
