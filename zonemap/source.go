package zonemap

import (
	"context"
	"fmt"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

// IndexSource hands a scan the zone statistics of the ZoneMap segments of
// one version (ours and Lance's), for pruning next to the seeds. Segment
// files are read on first use and validated (ReadSegment); a segment that
// cannot be read or does not fit the fragment it is asked about is
// reported (in the error of that call, and by Problems) and never used.
// It is safe for concurrent use.
type IndexSource struct {
	st    *store.Store
	m     *pb.Manifest
	res   *manifest.Resolver
	stats *datafile.IOStats

	// byField lists the ZoneMap segments per indexed field id.
	byField map[int32][]*segmentRef

	mu       sync.Mutex
	problems []error
	// cols caches FindColumn per column name (under mu): it is asked once
	// per fragment and column, and its type check is not free.
	cols map[string]columnLookup
}

type columnLookup struct {
	col Column
	err error
}

// column is FindColumn on the source's manifest, memoized.
func (s *IndexSource) column(name string) (Column, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cols[name]; ok {
		return c.col, c.err
	}
	col, err := FindColumn(s.m, name)
	if s.cols == nil {
		s.cols = map[string]columnLookup{}
	}
	s.cols[name] = columnLookup{col, err}
	return col, err
}

type segmentRef struct {
	idx   *pb.IndexMetadata
	name  string
	frags *roaring.Bitmap // nil: unreadable bitmap (reported on use)
	err   error           // why the metadata is unusable (set before use)

	once    sync.Once
	loadErr error // why the file is unusable (set inside once)
	seg     *Segment
	// zones by fragment, filled with seg
	byFrag map[uint64][]Zone
}

// NewIndexSource prepares the ZoneMap segments of the manifest file f of
// the dataset rooted at st. stats, when set, counts the reads of index
// files. Nothing is read yet.
func NewIndexSource(st *store.Store, f *manifest.File, stats *datafile.IOStats) (*IndexSource, error) {
	res, err := manifest.NewResolver(f.Manifest)
	if err != nil {
		return nil, err
	}
	s := &IndexSource{st: st, m: f.Manifest, res: res, stats: stats, byField: map[int32][]*segmentRef{}}
	for _, idx := range f.Indices() {
		if !IsZoneMap(idx) {
			continue
		}
		ref := &segmentRef{idx: idx, name: idx.GetName()}
		if len(idx.GetFields()) != 1 {
			ref.err = fmt.Errorf("%w: segment of %q covers %d fields, want 1", ErrInvalidIndex, idx.GetName(), len(idx.GetFields()))
		} else if ref.frags, ref.err = fragmentBitmap(idx); ref.err == nil {
			_, ref.err = DecodeDetails(idx)
		}
		fid := int32(-1)
		if len(idx.GetFields()) > 0 {
			fid = idx.GetFields()[0]
		}
		s.byField[fid] = append(s.byField[fid], ref)
	}
	return s, nil
}

// Name names the source in scan plans.
func (s *IndexSource) Name() string { return "zonemap index" }

// Segments reports how many ZoneMap segments the version declares.
func (s *IndexSource) Segments() int {
	n := 0
	for _, refs := range s.byField {
		n += len(refs)
	}
	return n
}

// Problems returns the errors of the segments found unusable so far.
func (s *IndexSource) Problems() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.problems...)
}

func (s *IndexSource) report(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.problems {
		if e.Error() == err.Error() {
			return
		}
	}
	s.problems = append(s.problems, err)
}

// ColumnZones is what one segment knows about one column of one fragment.
type ColumnZones struct {
	// Source names the segment: "zonemap index NAME (segment UUID)".
	Source    string
	ValueType arrow.DataType
	// Zones hold the fragment's physical row offsets; rows no zone covers
	// are unknown.
	Zones []seedio.Zone
}

// Zones returns, for each of the named top-level columns of fragment frag
// (with physicalRows rows), the statistics of every usable ZoneMap segment
// covering it. Columns without such a segment are absent. When a segment
// that claims the fragment cannot be used (unreadable or invalid file, a
// fragment id in its bitmap without zones, zones beyond the fragment's
// rows, a type other than the column's) the error says so; the zones of
// the other segments are still returned, and the caller must not use the
// failed segment for this fragment.
func (s *IndexSource) Zones(ctx context.Context, frag, physicalRows uint64, columns []string) (map[string][]ColumnZones, error) {
	out := map[string][]ColumnZones{}
	var firstErr error
	fail := func(err error) {
		s.report(err)
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, name := range columns {
		col, err := s.column(name)
		if err != nil {
			continue // not a column an index can describe
		}
		for _, ref := range s.byField[col.FieldID] {
			if ref.err == nil && (ref.frags == nil || !ref.frags.Contains(uint32(frag))) {
				continue
			}
			u, _ := manifest.IndexUUID(ref.idx)
			label := fmt.Sprintf("zonemap index %s (segment %s)", ref.name, u)
			if ref.err != nil {
				fail(fmt.Errorf("%s: ignored: %w", label, ref.err))
				continue
			}
			ref.once.Do(func() {
				seg, err := readIndexSegment(ctx, s.st, s.res, ref.idx, col, s.stats)
				if err == nil {
					err = checkCoverage(seg, ref.idx)
				}
				if err != nil {
					ref.loadErr = err
					return
				}
				ref.seg = seg
				ref.byFrag = map[uint64][]Zone{}
				for _, z := range seg.Zones {
					ref.byFrag[z.FragmentID] = append(ref.byFrag[z.FragmentID], z)
				}
			})
			if ref.loadErr != nil {
				fail(fmt.Errorf("%s: ignored: %w", label, ref.loadErr))
				continue
			}
			if !arrow.TypeEqual(ref.seg.ValueType, col.Type) {
				fail(fmt.Errorf("%s: ignored: min/max are %s, the column is %s", label, ref.seg.ValueType, col.Type))
				continue
			}
			zs := ref.byFrag[frag]
			if len(zs) == 0 {
				fail(fmt.Errorf("%s: ignored for fragment %d: its bitmap lists the fragment but the file has no zones for it", label, frag))
				continue
			}
			if end := zs[len(zs)-1].End(); physicalRows != 0 && end > physicalRows {
				fail(fmt.Errorf("%s: ignored for fragment %d: zones reach row %d, the fragment has %d", label, frag, end, physicalRows))
				continue
			}
			cz := ColumnZones{Source: label, ValueType: ref.seg.ValueType, Zones: make([]seedio.Zone, len(zs))}
			for i, z := range zs {
				cz.Zones[i] = seedio.Zone{Index: i, Start: z.Start, Stats: z.Stats()}
			}
			out[name] = append(out[name], cz)
		}
	}
	return out, firstErr
}
