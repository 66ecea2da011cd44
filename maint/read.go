package maint

import (
	"context"
	"fmt"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// stores opens the bases a manifest's files live in, once each.
type stores struct {
	st    commit.Store
	res   *manifest.Resolver
	mu    sync.Mutex // guards bases (fragments are opened concurrently)
	bases map[string]*store.Store
}

func newStores(st commit.Store, m *pb.Manifest) (*stores, error) {
	r, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	return &stores{st: st, res: r, bases: map[string]*store.Store{}}, nil
}

func (s *stores) close() {
	for _, b := range s.bases {
		_ = b.Close()
	}
}

// of returns the bucket and key of a resolved location.
func (s *stores) of(ctx context.Context, loc manifest.Location) (bucketKey, error) {
	if loc.Base == "" {
		return bucketKey{s.st.Bucket(), s.st.KeyPrefix() + loc.Path}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bases[loc.Base]
	if b == nil {
		var err error
		if bo, ok := s.st.(interface {
			OpenBase(context.Context, string) (*store.Store, error)
		}); ok {
			b, err = bo.OpenBase(ctx, loc.Base)
		} else {
			b, err = store.Open(ctx, loc.Base)
		}
		if err != nil {
			return bucketKey{}, fmt.Errorf("base %q: %w", loc.Base, err)
		}
		s.bases[loc.Base] = b
	}
	return bucketKey{b.Bucket(), b.KeyPrefix() + loc.Path}, nil
}

// deleted returns the deleted row offsets of a fragment.
func (s *stores) deleted(ctx context.Context, f *pb.DataFragment) (*roaring.Bitmap, error) {
	d := f.GetDeletionFile()
	if d == nil {
		return roaring.New(), nil
	}
	loc, err := s.res.DeletionFile(f.GetId(), d)
	if err != nil {
		return nil, err
	}
	bk, err := s.of(ctx, loc)
	if err != nil {
		return nil, err
	}
	return manifest.ReadDeletionFile(ctx, bk.b, bk.key, d.GetFileType())
}

// fragmentReader reads the live rows of one fragment as the table's
// top-level columns, from whichever data file holds each column.
type fragmentReader struct {
	m     *pb.Manifest
	frag  *pb.DataFragment
	files []*datafile.File
	// col[i] is the (file, top-level field index in that file) of the
	// table's i-th top-level field.
	col  []fileField
	rows uint64 // physical rows
}

type fileField struct{ file, field int }

// topFields returns the manifest's top-level fields in schema order.
func topFields(m *pb.Manifest) []*pb.Field {
	var out []*pb.Field
	for _, f := range m.GetFields() {
		if f.GetParentId() == -1 {
			out = append(out, f)
		}
	}
	return out
}

// subtreeIDs returns the field ids of the top-level field top and its
// descendants in pre-order, as the manifest lists them.
func subtreeIDs(m *pb.Manifest, top int32) []int32 {
	in := map[int32]bool{top: true}
	out := []int32{top}
	for _, f := range m.GetFields() {
		if f.GetId() != top && in[f.GetParentId()] {
			in[f.GetId()] = true
			out = append(out, f.GetId())
		}
	}
	return out
}

func openFragment(ctx context.Context, s *stores, m *pb.Manifest, f *pb.DataFragment) (*fragmentReader, error) {
	tops := topFields(m)
	fr := &fragmentReader{m: m, frag: f, col: make([]fileField, len(tops))}
	for i := range fr.col {
		fr.col[i] = fileField{-1, -1}
	}
	pos := map[int32]int{}
	for i, t := range tops {
		pos[t.GetId()] = i
	}
	for _, df := range f.GetFiles() {
		maj, mnr := df.GetFileMajorVersion(), df.GetFileMinorVersion()
		if maj == 0 && mnr < 3 {
			return nil, fmt.Errorf("%w: fragment %d: data file %s is legacy (0.1) storage", ErrStorageVersion, f.GetId(), df.GetPath())
		}
		loc, err := s.res.DataFile(df)
		if err != nil {
			return nil, err
		}
		bk, err := s.of(ctx, loc)
		if err != nil {
			return nil, err
		}
		// The manifest's file size (when a writer that records it right
		// wrote the manifest) saves a stat per file; a size that does not
		// fit the file's footer falls back to asking the store.
		var file *datafile.File
		if sz := int64(df.GetFileSizeBytes()); sz > 0 && m.GetWriterVersion() != nil {
			file, err = datafile.Open(ctx, bk.b, bk.key, datafile.OpenOptions{Size: sz})
		}
		if file == nil {
			file, err = datafile.Open(ctx, bk.b, bk.key, datafile.OpenOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("fragment %d: %w", f.GetId(), err)
		}
		fi := len(fr.files)
		fr.files = append(fr.files, file)
		if fi == 0 {
			fr.rows = file.NumRows()
		} else if file.NumRows() != fr.rows {
			return nil, fmt.Errorf("%w: fragment %d: data file %s has %d rows, the first one %d", ErrCorruptFragment, f.GetId(), df.GetPath(), file.NumRows(), fr.rows)
		}
		sch := file.Schema()
		for _, ti := range sch.TopLevel() {
			if p, ok := pos[sch.Fields[ti].ID]; ok {
				fr.col[p] = fileField{fi, ti} // a later file supersedes an earlier one
			}
		}
	}
	if len(fr.files) == 0 {
		return nil, fmt.Errorf("%w: fragment %d has no data files", ErrCorruptFragment, f.GetId())
	}
	for i, c := range fr.col {
		if c.file < 0 && !tops[i].GetNullable() {
			return nil, fmt.Errorf("%w: fragment %d stores no data for the non-nullable column %q", ErrCorruptFragment, f.GetId(), tops[i].GetName())
		}
	}
	if pr := f.GetPhysicalRows(); pr != 0 && pr != fr.rows {
		return nil, fmt.Errorf("%w: fragment %d records %d physical rows, its data files hold %d", ErrCorruptFragment, f.GetId(), pr, fr.rows)
	}
	return fr, nil
}

// liveRanges returns the row ranges of [0, rows) not in del.
func liveRanges(rows uint64, del *roaring.Bitmap) []datafile.RowRange {
	var out []datafile.RowRange
	start := uint64(0)
	it := del.Iterator()
	for it.HasNext() {
		d := uint64(it.Next())
		if d >= rows {
			break
		}
		if d > start {
			out = append(out, datafile.RowRange{Start: start, End: d})
		}
		start = d + 1
	}
	if start < rows {
		out = append(out, datafile.RowRange{Start: start, End: rows})
	}
	return out
}

// read returns the table's top-level columns for the given ranges.
// read returns the table's top-level columns for the given ranges, each
// in the table's view (datafile.File.ConformArray: renamed or dropped
// struct children); a column the fragment stores nowhere (added to the
// table after the fragment was written) reads as nulls, as in Lance.
func (fr *fragmentReader) read(ctx context.Context, ranges []datafile.RowRange) ([]arrow.Field, []arrow.Array, error) {
	var n int64
	for _, r := range ranges {
		n += int64(r.Len())
	}
	perFile := make([][]int, len(fr.files))
	for _, c := range fr.col {
		if c.file >= 0 {
			perFile[c.file] = append(perFile[c.file], c.field)
		}
	}
	got := make([]arrow.RecordBatch, len(fr.files))
	defer func() {
		for _, r := range got {
			if r != nil {
				r.Release()
			}
		}
	}()
	for fi, fields := range perFile {
		if len(fields) == 0 {
			continue
		}
		rec, err := fr.files[fi].ReadRows(ctx, datafile.ReadRequest{Fields: fields, Ranges: ranges})
		if err != nil {
			return nil, nil, fmt.Errorf("fragment %d: %w", fr.frag.GetId(), err)
		}
		got[fi] = rec
	}
	out := make([]arrow.Array, len(fr.col))
	fields := make([]arrow.Field, len(fr.col))
	next := make([]int, len(fr.files))
	fail := func(err error) ([]arrow.Field, []arrow.Array, error) {
		for _, a := range out {
			if a != nil {
				a.Release()
			}
		}
		return nil, nil, err
	}
	var table *arrow.Schema
	for i, c := range fr.col {
		if c.file < 0 {
			if table == nil {
				var err error
				if table, err = tableArrowSchema(fr.m); err != nil {
					return fail(err)
				}
			}
			fields[i] = table.Field(i)
			out[i] = array.MakeArrayOfNull(memory.DefaultAllocator, fields[i].Type, int(n))
			continue
		}
		j := next[c.file]
		next[c.file]++
		a, err := fr.files[c.file].ConformArray(c.field, got[c.file].Column(j), fr.m.GetFields())
		if err != nil {
			return fail(fmt.Errorf("fragment %d: %w", fr.frag.GetId(), err))
		}
		fields[i] = got[c.file].Schema().Field(j)
		fields[i].Type = a.DataType()
		out[i] = a
	}
	return fields, out, nil
}

// tableArrowSchema is the Arrow schema of the table's fields.
func tableArrowSchema(m *pb.Manifest) (*arrow.Schema, error) {
	var s datafile.Schema
	pos := map[int32]int{}
	for i, f := range m.GetFields() {
		s.Fields = append(s.Fields, datafile.Field{Name: f.GetName(), ID: f.GetId(), ParentID: f.GetParentId(),
			LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()})
		pos[f.GetId()] = i
	}
	for i := range s.Fields {
		if p, ok := pos[s.Fields[i].ParentID]; ok && s.Fields[i].ParentID != -1 {
			s.Fields[p].Children = append(s.Fields[p].Children, i)
		}
	}
	return s.ArrowSchema()
}

type bucketKey struct {
	b   *blob.Bucket
	key string
}
