package zonemap

import (
	"errors"
	"fmt"
	"io"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

const (
	// FileName is the one file of a ZoneMap segment, under _indices/<uuid>/.
	FileName = "zonemap.lance"
	// MetaRowsPerZone is the schema-metadata key holding rows_per_zone
	// (decimal).
	MetaRowsPerZone = "rows_per_zone"
	// MetaNullBitmap is the schema-metadata key holding the global-buffer
	// index of the null-row bitmap (decimal); absent = null positions
	// unknown.
	MetaNullBitmap = "null_bitmap"
	// TypeURL is the type URL of the index details in IndexMetadata.
	TypeURL = "/lance.table.ZoneMapIndexDetails"
	// IndexVersion is the ZoneMap index format version Lance 12 writes
	// (IndexMetadata.index_version).
	IndexVersion = 0
	// DefaultRowsPerZone is Lance's default zone size.
	DefaultRowsPerZone = 8192
	// MaxRowsPerZone is the largest zone size accepted (zone offsets are
	// 32-bit in Lance, and seeds refuse more, R4).
	MaxRowsPerZone = 1<<32 - 1
)

// Column names of the zonemap.lance file, in the order Lance writes them.
const (
	colMin        = "min"
	colMax        = "max"
	colNullCount  = "null_count"
	colNaNCount   = "nan_count"
	colFragmentID = "fragment_id"
	colZoneStart  = "zone_start"
	colZoneLength = "zone_length"
)

var (
	// ErrUnsupportedType: the column's type cannot be indexed by this
	// package (see SupportedType).
	ErrUnsupportedType = errors.New("zonemap: column type not supported")
	// ErrInvalidIndex: a zonemap.lance file (or its IndexMetadata) breaks
	// the format; the segment must not be used.
	ErrInvalidIndex = errors.New("zonemap: invalid ZoneMap index")
)

// Zone is one record of a ZoneMap segment: rows [Start, Start+Length) of
// fragment FragmentID.
//
// Min and Max are Go values of the column's type as seedio.ValueAt returns
// them (float64 for Float64, string for Utf8, …), or nil for a null bound.
// They follow Lance's conventions: they bound the ordinary (non-null,
// non-NaN) values of the zone; Min is nil when the zone has none; for a
// float column Max is the canonical positive quiet NaN whenever the zone
// may hold a positive NaN (so that Lance, which orders NaN above every
// number, keeps the zone for x > c), and Max is nil when the zone has
// neither ordinary values nor positive NaNs.
type Zone struct {
	FragmentID uint64
	Start      uint64
	Length     uint64
	NullCount  uint32
	NaNCount   uint32
	Min, Max   any
}

// End returns the exclusive end offset of the zone.
func (z Zone) End() uint64 { return z.Start + z.Length }

// Segment is the content of one zonemap.lance file.
type Segment struct {
	// ValueType is the type of the min and max columns: the indexed
	// column's type.
	ValueType arrow.DataType
	// RowsPerZone is the zone size the segment was built with.
	RowsPerZone uint64
	// Zones, sorted by (FragmentID, Start), never overlapping.
	Zones []Zone
	// NullRows holds, per fragment id, the local row offsets of the null
	// rows of the indexed column (only fragments with nulls appear). nil
	// means null positions are unknown: no null_bitmap buffer.
	NullRows map[uint32]*roaring.Bitmap
}

// Fragments returns the ids of the fragments the segment has zones for.
func (s *Segment) Fragments() *roaring.Bitmap {
	b := roaring.New()
	for _, z := range s.Zones {
		b.Add(uint32(z.FragmentID))
	}
	return b
}

// SupportedType reports whether a column of type dt can be indexed: the
// types whose values this package orders exactly as Lance does and that
// the index file can hold — booleans, integers, floats, decimals, dates,
// times, timestamps, durations, strings, binaries and fixed-size binaries.
// Nested, dictionary, view, interval and extension types are refused with
// ErrUnsupportedType.
func SupportedType(dt arrow.DataType) error {
	switch dt.ID() {
	case arrow.BOOL,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64,
		arrow.TIMESTAMP, arrow.DURATION,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
		arrow.FIXED_SIZE_BINARY:
		// The index file must be writable: its min/max columns have the
		// column's type.
		probe := arrow.NewSchema([]arrow.Field{{Name: colMin, Type: dt, Nullable: true}}, nil)
		if _, err := datafile.NewWriter(io.Discard, probe, datafile.WriterOptions{}); err != nil {
			return fmt.Errorf("%w: %s: the index file cannot hold it yet (%v)", ErrUnsupportedType, dt, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnsupportedType, dt)
}

// isFloat reports whether dt counts NaNs.
func isFloat(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// Details are the ZoneMapIndexDetails of a segment.
type Details struct {
	RowsPerZone uint64
	// UseSeeds asks writers to embed zone write seeds for the column in new
	// data files, so that updates need not read the data again.
	UseSeeds bool
	// HasNullBitmap says the segment's file carries the null-row bitmap.
	HasNullBitmap bool
}

// EncodeDetails returns the IndexMetadata.index_details of d.
func EncodeDetails(d Details) (*anypb.Any, error) {
	b, err := proto.Marshal(&pb.ZoneMapIndexDetails{RowsPerZone: d.RowsPerZone, UseSeeds: d.UseSeeds, HasNullBitmap: d.HasNullBitmap})
	if err != nil {
		return nil, err
	}
	return &anypb.Any{TypeUrl: TypeURL, Value: b}, nil
}

// IsZoneMap reports whether an index segment is a ZoneMap (type URLs are
// compared case-insensitively, as Lance does).
func IsZoneMap(idx *pb.IndexMetadata) bool {
	return equalFold(idx.GetIndexDetails().GetTypeUrl(), TypeURL)
}

// DecodeDetails parses the ZoneMapIndexDetails of a ZoneMap segment.
func DecodeDetails(idx *pb.IndexMetadata) (Details, error) {
	if !IsZoneMap(idx) {
		return Details{}, fmt.Errorf("%w: index %q has details %q, not %s", ErrInvalidIndex, idx.GetName(), idx.GetIndexDetails().GetTypeUrl(), TypeURL)
	}
	var m pb.ZoneMapIndexDetails
	if err := proto.Unmarshal(idx.GetIndexDetails().GetValue(), &m); err != nil {
		return Details{}, fmt.Errorf("%w: index %q: details: %v", ErrInvalidIndex, idx.GetName(), err)
	}
	return Details{RowsPerZone: m.GetRowsPerZone(), UseSeeds: m.GetUseSeeds(), HasNullBitmap: m.GetHasNullBitmap()}, nil
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
