package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/zonemap"
)

// Lance's names for the row id and row address columns.
const (
	RowIDColumn   = "_rowid"
	RowAddrColumn = "_rowaddr"
)

// DefaultBatchSize is the number of rows per batch when Options.BatchSize
// is 0.
const DefaultBatchSize = 8192

// ErrBadOptions: the options do not fit the dataset (unknown column, …).
var ErrBadOptions = errors.New("scan: bad options")

// Options selects what a scan reads.
type Options struct {
	// Ref selects the version (latest of main by default), tag or branch.
	Ref snapshot.Ref
	// Columns are the projected columns, dotted for nested fields ("a.b",
	// output under that name). Nil means every top-level column.
	Columns []string
	// Filter is a predicate (package filter); empty selects every row.
	Filter string
	// Limit stops after this many rows (0: no limit).
	Limit int64
	// WithRowID / WithRowAddr append _rowid / _rowaddr (uint64) columns.
	// _rowid is the stable row id when the table has them, else the row
	// address, as Lance does.
	WithRowID, WithRowAddr bool
	// BatchSize bounds the rows read per data-file request and per output
	// batch (0: DefaultBatchSize).
	BatchSize int
	// NoPrune reads every row (no seed or index pruning); the answer is
	// the same, only the cost differs.
	NoPrune bool
	// NoIndex ignores ZoneMap indices (seeds are still used).
	NoIndex bool
}

// Scanner is a prepared scan of one version of a dataset.
type Scanner struct {
	snap     *snapshot.Snapshot
	st       *store.Store
	bases    *store.Bases
	res      *manifest.Resolver
	m        *pb.Manifest
	opts     Options
	table    *arrow.Schema
	topIDs   map[string]int32 // top-level column name → field id
	subtree  map[int32]map[int32]bool
	children map[int32][]int32 // field id → child ids in schema order
	filter   *filter.Filter
	read     []string // top-level columns read (projection ∪ filter)
	out      *arrow.Schema
	proj     []projection
	flagged  bool
	idx      *zonemap.IndexSource
	stats    datafile.IOStats
	tailHint atomic.Int64 // first tail read of the next data file opened
	noSeeds  bool         // prune by index segments only (filter.MayFail)
}

// projection is one output column: a top-level column or a nested path.
type projection struct {
	name string
	path []string
	typ  arrow.DataType
}

// New prepares a scan of the dataset d. It opens the version with the
// flag checks of snapshot Open (a version whose reader flags this build
// does not support is refused the same way), binds the filter to the
// version's schema and resolves the projection. Close it when done.
func New(ctx context.Context, d *snapshot.Dataset, opts Options) (*Scanner, error) {
	snap, err := d.Checkout(ctx, snapshot.Options{Ref: opts.Ref})
	if err != nil {
		return nil, err
	}
	st, err := d.BranchStore(snap.Branch)
	if err != nil {
		return nil, err
	}
	m := snap.Manifest()
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	s := &Scanner{snap: snap, st: st, bases: store.NewBases(st), res: res, m: m, opts: opts, flagged: commit.HasZoneWriteSeeds(m)}
	if s.opts.BatchSize <= 0 {
		s.opts.BatchSize = DefaultBatchSize
	}
	s.subtree = subtrees(m)
	s.children = map[int32][]int32{}
	for _, f := range m.GetFields() {
		if f.GetParentId() != -1 && f.GetId() >= 0 {
			s.children[f.GetParentId()] = append(s.children[f.GetParentId()], f.GetId())
		}
	}
	if s.table, s.topIDs, err = tableSchema(m); err != nil {
		s.Close()
		return nil, err
	}
	if opts.Filter != "" {
		if s.filter, err = filter.Compile(opts.Filter, s.table); err != nil {
			s.Close()
			return nil, err
		}
		// A division that can fail: Lance 12 evaluates every batch of
		// the rows it reads (within its short-circuits), so must we (see
		// lanceBatch): seeds, which Lance cannot read, must not skip any
		// zone; a ZoneMap index still does, as it does for Lance 12.
		s.noSeeds = s.filter.MayFail()
	}
	if err := s.project(); err != nil {
		s.Close()
		return nil, err
	}
	if !opts.NoIndex && !opts.NoPrune && s.filter != nil {
		if s.idx, err = zonemap.NewIndexSource(st, snap.File, &s.stats); err != nil || s.idx.Segments() == 0 {
			s.idx = nil // no segment (or an unreadable index section, which never fails the scan)
		}
	}
	return s, nil
}

// Close releases the stores of base paths the scan opened.
func (s *Scanner) Close() error { return s.bases.Close() }

// Schema is the output schema.
func (s *Scanner) Schema() *arrow.Schema { return s.out }

// Version is the scanned version.
func (s *Scanner) Version() uint64 { return s.snap.Version }

// BytesRead reports the storage reads so far (requests, bytes).
func (s *Scanner) BytesRead() (requests, bytes int64) {
	return s.stats.Requests.Load(), s.stats.Bytes.Load()
}

// TableSchema converts a manifest's fields to the Arrow schema scans and
// filters see.
func TableSchema(m *pb.Manifest) (*arrow.Schema, error) {
	s, _, err := tableSchema(m)
	return s, err
}

func tableSchema(m *pb.Manifest) (*arrow.Schema, map[string]int32, error) {
	sch := datafile.Schema{}
	pos := map[int32]int{}
	ids := map[string]int32{}
	for _, f := range m.GetFields() {
		if f.GetId() < 0 {
			continue
		}
		pos[f.GetId()] = len(sch.Fields)
		sch.Fields = append(sch.Fields, datafile.Field{Name: f.GetName(), ID: f.GetId(), ParentID: f.GetParentId(), LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()})
		if f.GetParentId() == -1 {
			ids[f.GetName()] = f.GetId()
		}
	}
	for i := range sch.Fields {
		if p := sch.Fields[i].ParentID; p != -1 {
			pi, ok := pos[p]
			if !ok {
				return nil, nil, fmt.Errorf("%w: field %q names parent %d, which the schema lacks", manifest.ErrCorrupt, sch.Fields[i].Name, p)
			}
			sch.Fields[pi].Children = append(sch.Fields[pi].Children, i)
		}
	}
	as, err := sch.ArrowSchema()
	if err != nil {
		return nil, nil, err
	}
	return as, ids, nil
}

func (s *Scanner) project() error {
	cols := s.opts.Columns
	if cols == nil {
		for _, f := range s.table.Fields() {
			cols = append(cols, f.Name)
		}
	}
	var fields []arrow.Field
	seen := map[string]bool{}
	addRead := func(name string) {
		if !seen[name] {
			seen[name] = true
			s.read = append(s.read, name)
		}
	}
	for _, c := range cols {
		path := strings.Split(c, ".")
		if _, ok := s.topIDs[c]; ok {
			path = []string{c} // a top-level name with a dot in it
		}
		fs := s.table.Fields()
		var f arrow.Field
		for i, name := range path {
			found := false
			for _, cand := range fs {
				if cand.Name == name {
					f, found = cand, true
					break
				}
			}
			if !found {
				return fmt.Errorf("%w: no column %q", ErrBadOptions, c)
			}
			if i < len(path)-1 {
				st, ok := f.Type.(*arrow.StructType)
				if !ok {
					return fmt.Errorf("%w: %q: %s is not a struct", ErrBadOptions, c, name)
				}
				fs = st.Fields()
			}
		}
		addRead(path[0])
		s.proj = append(s.proj, projection{name: c, path: path, typ: f.Type})
		fields = append(fields, arrow.Field{Name: c, Type: f.Type, Nullable: f.Nullable, Metadata: f.Metadata})
	}
	if s.filter != nil {
		for _, c := range s.filter.Columns() {
			addRead(c)
		}
	}
	if s.opts.WithRowID {
		fields = append(fields, arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	if s.opts.WithRowAddr {
		fields = append(fields, arrow.Field{Name: RowAddrColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	s.out = arrow.NewSchema(fields, nil)
	return nil
}

// fragment is what the scan knows about one fragment before reading data.
type fragment struct {
	f        *pb.DataFragment
	physRows uint64
	deleted  *roaring.Bitmap
	kept     []filter.Range
	plan     FragmentPlan
	files    map[int]*datafile.File // by data-file index, opened lazily
	closers  []io.Closer            // what the files read through
}

// close releases what the fragment's opened files hold (their local
// descriptors); the files are not read afterwards.
func (fr *fragment) close() {
	for _, c := range fr.closers {
		c.Close()
	}
	fr.closers = nil
}

func (s *Scanner) openFile(ctx context.Context, df *pb.DataFile) (*datafile.File, io.Closer, error) {
	loc, err := s.res.DataFile(df)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.bases.Store(ctx, loc.Base)
	if err != nil {
		return nil, nil, err
	}
	size := int64(df.GetFileSizeBytes())
	// A local data file is read with pread on one descriptor; when it
	// cannot be opened so, the bucket's read reports the error.
	var ra io.ReaderAt
	osf, oerr := st.OpenLocalFile(loc.Path)
	if oerr == nil && osf != nil {
		if size <= 0 {
			if fi, err := osf.Stat(); err == nil {
				size = fi.Size()
			}
		}
		if size > 0 {
			ra = osf
		} else {
			osf.Close()
			osf = nil
		}
	}
	tail := int(s.tailHint.Load())
	if tail <= 0 {
		tail = openTailSize
	}
	f, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+loc.Path, datafile.OpenOptions{Size: size, ReaderAt: ra, Stats: &s.stats, TailSize: tail,
		// Column metadata only for the columns a read needs, when it needs them.
		LazyColumns: true,
		// Legacy v1 files hold no schema: the manifest's (used only for them).
		LegacyFields: s.m.GetFields(), LegacyFieldIDs: df.GetFields(), LegacyManifest: &manifestReader{ctx: ctx, st: s.st, key: s.snap.Path}})
	if err == nil && f.Version() != datafile.V0_1 {
		// The next file of the table most likely has the same layout: its
		// first request reads the offset tables and the footer, nothing
		// before them. The schema, the seeds and the column metadata are
		// each read by exact range when needed: a file its seed prunes
		// never reads column metadata (with the writers' layout, seeds |
		// schema | column metadata | tables | footer, one tail read
		// holding the schema would hold the column metadata too).
		start := int64(f.Footer().CMOStart)
		if h := f.Size() - start; h > 0 && h <= maxTailHint {
			s.tailHint.Store(max(h, datafile.FooterSize))
		}
	}
	if err != nil {
		if osf != nil {
			osf.Close()
		}
		return nil, nil, err
	}
	if osf == nil {
		return f, nil, nil
	}
	return f, osf, nil
}

// openTailSize is the first read of the first data file's tail (later
// files use the size the previous file's metadata needed): the footer,
// the offset tables and the schema of most files fit; what does not is
// read by exact range.
const (
	openTailSize = 4 << 10
	maxTailHint  = 64 << 10
)

// manifestReader reads the scanned manifest file on demand (legacy
// dictionary columns keep their values there).
type manifestReader struct {
	ctx context.Context
	st  *store.Store
	key string
}

func (r *manifestReader) ReadAt(p []byte, off int64) (int, error) {
	b, err := r.st.GetRange(r.ctx, r.key, off, int64(len(p)))
	n := copy(p, b)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

func (s *Scanner) deletions(ctx context.Context, f *pb.DataFragment) (*roaring.Bitmap, error) {
	d := f.GetDeletionFile()
	if d == nil {
		return nil, nil
	}
	loc, err := s.res.DeletionFile(f.GetId(), d)
	if err != nil {
		return nil, err
	}
	st, err := s.bases.Store(ctx, loc.Base)
	if err != nil {
		return nil, err
	}
	return manifest.ReadDeletionFile(ctx, st.Bucket(), st.KeyPrefix()+loc.Path, d.GetFileType())
}

// fileFor returns the data file (index in the fragment) holding the
// top-level column with field id id (2.1+ files list only the leaf ids of
// nested columns), or -1.
func (s *Scanner) fileFor(f *pb.DataFragment, id int32) int {
	ids := s.subtree[id]
	for i := len(f.GetFiles()) - 1; i >= 0; i-- {
		for _, fid := range f.GetFiles()[i].GetFields() {
			if fid == id || ids[fid] {
				return i
			}
		}
	}
	return -1
}

// subtrees maps each top-level field id to the ids of its descendants.
func subtrees(m *pb.Manifest) map[int32]map[int32]bool {
	parent := map[int32]int32{}
	for _, f := range m.GetFields() {
		parent[f.GetId()] = f.GetParentId()
	}
	out := map[int32]map[int32]bool{}
	for _, f := range m.GetFields() {
		id, top := f.GetId(), f.GetId()
		for depth := 0; parent[top] != -1 && depth < 64; depth++ {
			p, ok := parent[top]
			if !ok {
				break
			}
			top = p
		}
		if top != id {
			if out[top] == nil {
				out[top] = map[int32]bool{}
			}
			out[top][id] = true
		}
	}
	return out
}

// prepare plans one fragment: its deletions, and with a filter the row
// ranges pruning keeps.
func (s *Scanner) prepare(ctx context.Context, f *pb.DataFragment) (*fragment, error) {
	fr := &fragment{f: f, files: map[int]*datafile.File{}, physRows: f.GetPhysicalRows()}
	if err := s.plan(ctx, fr); err != nil {
		fr.close()
		return nil, err
	}
	return fr, nil
}

// plan fills fr's plan and kept ranges (prepare).
func (s *Scanner) plan(ctx context.Context, fr *fragment) error {
	f := fr.f
	fr.plan = FragmentPlan{ID: f.GetId()}
	if fr.physRows == 0 && len(f.GetFiles()) > 0 {
		df, err := s.file(ctx, fr, 0)
		if err != nil {
			return err
		}
		fr.physRows = df.NumRows()
	}
	fr.plan.Rows = fr.physRows
	var err error
	if fr.deleted, err = s.deletions(ctx, f); err != nil {
		return fmt.Errorf("fragment %d: deletion file: %w", f.GetId(), err)
	}
	if fr.deleted != nil {
		fr.plan.DeletedRows = fr.deleted.GetCardinality()
	}
	all := []filter.Range{{Start: 0, End: fr.physRows}}
	fr.kept = all
	if fr.physRows == 0 {
		fr.kept = nil
	}
	for i, df := range f.GetFiles() {
		if s.needsFile(f, i) {
			fr.plan.BytesFull += int64(df.GetFileSizeBytes())
		}
	}
	if s.filter != nil && !s.opts.NoPrune && fr.physRows > 0 {
		if err := s.prune(ctx, fr); err != nil {
			return err
		}
	}
	for _, r := range fr.kept {
		fr.plan.RowsKept += r.End - r.Start
	}
	if fr.physRows > 0 {
		fr.plan.BytesToRead = int64(float64(fr.plan.BytesFull) * float64(fr.plan.RowsKept) / float64(fr.physRows))
	}
	fr.plan.Pruned = len(fr.kept) == 0 && fr.physRows > 0
	return nil
}

func (s *Scanner) needsFile(f *pb.DataFragment, i int) bool {
	for _, c := range s.read {
		if s.fileFor(f, s.topIDs[c]) == i {
			return true
		}
	}
	return false
}

func (s *Scanner) file(ctx context.Context, fr *fragment, i int) (*datafile.File, error) {
	if df, ok := fr.files[i]; ok {
		return df, nil
	}
	df, c, err := s.openFile(ctx, fr.f.GetFiles()[i])
	if err != nil {
		return nil, fmt.Errorf("fragment %d: %w", fr.f.GetId(), err)
	}
	fr.files[i] = df
	if c != nil {
		fr.closers = append(fr.closers, c)
	}
	return df, nil
}

// prune applies the usable seeds (v0 always, v1 only when the version
// carries the flag, R61) and ZoneMap index segments to every filter term.
// Index segments (outside the data files) are consulted first: when they
// alone prune the fragment, no data file is opened. Only the seeds of the
// filtered columns are read.
func (s *Scanner) prune(ctx context.Context, fr *fragment) error {
	terms := s.filter.Terms()
	known := make([][]filter.Range, len(terms))
	ok := make([]bool, len(terms))
	fr.plan.Terms = make([]TermPlan, len(terms))
	for i, t := range terms {
		fr.plan.Terms[i].Term = t.Text
	}
	if s.idx != nil {
		for i, t := range terms {
			tp := &fr.plan.Terms[i]
			if strings.Contains(t.Column, ".") {
				continue
			}
			czs, _ := s.idx.Zones(ctx, fr.f.GetId(), fr.physRows, []string{t.Column})
			for _, cz := range czs[t.Column] {
				keep, err := seedio.PruneZones(cz.ValueType, cz.Zones, t.Pred)
				if err != nil {
					continue
				}
				rs := filter.ZoneRanges(cz.Zones, keep, fr.physRows)
				tp.Sources = append(tp.Sources, cz.Source)
				tp.ZonesTotal += len(keep)
				tp.ZonesKept += countTrue(keep)
				known[i], ok[i] = intersectOr(known[i], ok[i], rs), true
			}
		}
		keep := s.filter.KeepRanges
		if s.noSeeds {
			keep = s.filter.KeepRangesAsLance12Index
		}
		if kept := keep(fr.physRows, func(i int) ([]filter.Range, bool) { return known[i], ok[i] }); len(kept) == 0 {
			fr.kept = nil
			return nil
		}
	}
	if s.noSeeds {
		fr.kept = s.filter.KeepRangesAsLance12Index(fr.physRows, func(i int) ([]filter.Range, bool) { return known[i], ok[i] })
		return nil
	}
	// the seeds each data file must provide: none for a term an index
	// segment answered (the zones it keeps are the seed's, or looser only
	// where the index is; pruning stays sound, and the fragment's seeds
	// are not read)
	byIndex := slices.Clone(ok)
	want := map[int][]string{}
	fileOf := make([]int, len(terms))
	for i, t := range terms {
		if byIndex[i] {
			fileOf[i] = -1
			continue
		}
		top := strings.Split(t.Column, ".")[0]
		fileOf[i] = s.fileFor(fr.f, s.topIDs[top])
		if fileOf[i] >= 0 && !slices.Contains(want[fileOf[i]], t.Column) {
			want[fileOf[i]] = append(want[fileOf[i]], t.Column)
		}
	}
	seedsByFile := map[int][]datafile.SeedInfo{}
	for i, t := range terms {
		tp := &fr.plan.Terms[i]
		fi := fileOf[i]
		if fi < 0 {
			continue
		}
		infos, seen := seedsByFile[fi]
		if !seen {
			df, err := s.file(ctx, fr, fi)
			if err != nil {
				return err
			}
			infos, err = df.SeedsOf(ctx, seedio.DecodeOptions{TableFlagged: s.flagged}, want[fi])
			if err != nil {
				return err
			}
			seedsByFile[fi] = infos
		}
		var seedSources []string
		for _, si := range infos {
			if si.Column != t.Column || si.Seed == nil || si.Seed.NumRows != fr.physRows {
				continue
			}
			keep, err := si.Seed.Prune(t.Pred)
			if err != nil {
				continue // a literal the seed's type cannot take: unknown
			}
			rs := filter.ZoneRanges(si.Seed.Zones, keep, fr.physRows)
			seedSources = append(seedSources, fmt.Sprintf("seed v%d", si.Seed.Version))
			tp.ZonesTotal += len(keep)
			tp.ZonesKept += countTrue(keep)
			known[i], ok[i] = intersectOr(known[i], ok[i], rs), true
		}
		tp.Sources = append(seedSources, tp.Sources...) // seeds first, then index segments
	}
	fr.kept = s.filter.KeepRanges(fr.physRows, func(i int) ([]filter.Range, bool) { return known[i], ok[i] })
	return nil
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

func intersectOr(cur []filter.Range, have bool, rs []filter.Range) []filter.Range {
	if !have {
		return rs
	}
	var out []filter.Range
	i, j := 0, 0
	for i < len(cur) && j < len(rs) {
		s, e := max(cur[i].Start, rs[j].Start), min(cur[i].End, rs[j].End)
		if s < e {
			out = append(out, filter.Range{Start: s, End: e})
		}
		if cur[i].End < rs[j].End {
			i++
		} else {
			j++
		}
	}
	return out
}
