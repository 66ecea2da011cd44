package datafile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/seedio"
)

var (
	// ErrSeedColumnMissing: a seed locator names a column that is not a
	// top-level field of the data file (R7).
	ErrSeedColumnMissing = errors.New("datafile: seed locator names a column not stored in the file (R7)")
	// ErrSeedBufferShared: two seed locators name the same global buffer (R6).
	ErrSeedBufferShared = errors.New("datafile: seed global buffer shared by two locators (R6)")
)

// seedReadGap: seed buffers closer than this are fetched in one range read.
const seedReadGap = 64 << 10

// SeedInfo is one `lance.seed.<column>` locator of a data file and what it
// points to. Err is non-nil when the seed is unusable (R63): the file has no
// seed for that column then, and no other field may be used.
type SeedInfo struct {
	Column  string         // the column name (the key after "lance.seed.")
	Value   string         // the raw locator value
	Locator seedio.Locator // parsed locator (zero if parsing failed)
	Buffer  BufferRange    // the global buffer (zero if it does not exist)
	Bytes   []byte         // the global buffer's bytes (nil if not read); read-only, may alias the File's cache
	Seed    *seedio.Seed   // the decoded and validated seed, nil on error
	Err     error
}

// Seeds lists the seed locators of the file (sorted by column name), reads
// the global buffers they name and decodes each through seedio.Decode. opts
// carries the table-level inputs (TableFlagged, ExpectRowsPerZone,
// MaxDecodedBytes); RowsPerZone, NumRows and ColumnType are filled in per
// seed from the locator and the file. A broken seed is reported in its
// SeedInfo.Err and never fails the call; the error result is only for a
// cancelled context.
func (f *File) Seeds(ctx context.Context, opts seedio.DecodeOptions) ([]SeedInfo, error) {
	return f.SeedsOf(ctx, opts, nil)
}

// SeedsOf is Seeds restricted to the seeds of the named columns (nil: all):
// only their global buffers are read and decoded. The checks that involve
// every locator (R6: a buffer shared by two locators) still see all of them.
func (f *File) SeedsOf(ctx context.Context, opts seedio.DecodeOptions, columns []string) ([]SeedInfo, error) {
	var out []SeedInfo
	for k, v := range f.schema.Metadata {
		if col, ok := strings.CutPrefix(k, seedio.LocatorKeyPrefix); ok {
			out = append(out, SeedInfo{Column: col, Value: v})
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	slices.SortFunc(out, func(a, b SeedInfo) int { return strings.Compare(a.Column, b.Column) })

	sch, schErr := f.schema.ArrowSchema()
	users := map[uint32]int{}
	for i := range out {
		s := &out[i]
		loc, err := seedio.ParseLocator(s.Value)
		if err != nil {
			s.Err = err
			continue
		}
		s.Locator = loc
		if int64(loc.BufferIndex) >= int64(len(f.globalBuffers)) {
			s.Err = &seedio.SeedError{Code: "E03", Zone: seedio.NoZone, Err: seedio.ErrSeedBufferMissing,
				Msg: fmt.Sprintf("locator %q names global buffer %d but the file has %d", s.Value, loc.BufferIndex, len(f.globalBuffers))}
			continue
		}
		s.Buffer = f.globalBuffers[loc.BufferIndex]
		users[loc.BufferIndex]++
		if schErr != nil {
			s.Err = schErr
			continue
		}
		if fi := f.schema.FieldByName(s.Column); fi < 0 {
			s.Err = fmt.Errorf("%w: column %q", ErrSeedColumnMissing, s.Column)
		}
	}
	for i := range out {
		s := &out[i]
		if s.Err == nil && users[s.Locator.BufferIndex] > 1 {
			s.Err = fmt.Errorf("%w: buffer %d", ErrSeedBufferShared, s.Locator.BufferIndex)
		}
	}
	if columns != nil {
		keep := out[:0]
		for _, s := range out {
			if slices.Contains(columns, s.Column) {
				keep = append(keep, s)
			}
		}
		out = keep
	}
	if err := f.readSeedBuffers(ctx, out); err != nil {
		return nil, err
	}
	for i := range out {
		s := &out[i]
		if s.Err != nil {
			continue
		}
		o := opts
		o.RowsPerZone = s.Locator.RowsPerZone
		o.NumRows = f.numRows
		o.ColumnType = columnType(sch, s.Column)
		s.Seed, s.Err = seedio.Decode(s.Bytes, o)
	}
	return out, nil
}

func columnType(sch *arrow.Schema, name string) arrow.DataType {
	for _, fl := range sch.Fields() {
		if fl.Name == name {
			return fl.Type
		}
	}
	return nil
}

// readSeedBuffers fills Bytes of every seed without an error, merging nearby
// buffers into one range read. Read failures become E03 on the seeds concerned.
func (f *File) readSeedBuffers(ctx context.Context, seeds []SeedInfo) error {
	var idx []int
	for i := range seeds {
		if seeds[i].Err == nil {
			if seeds[i].Buffer.Len > maxMetadataSize {
				seeds[i].Err = &seedio.SeedError{Code: "E04", Zone: seedio.NoZone, Err: seedio.ErrSeedNotIPCFile,
					Msg: fmt.Sprintf("global buffer %d is %d bytes, more than the %d allowed", seeds[i].Locator.BufferIndex, seeds[i].Buffer.Len, maxMetadataSize)}
				continue
			}
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		pa, pb := seeds[a].Buffer.Pos, seeds[b].Buffer.Pos
		switch {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	for len(idx) > 0 {
		start := seeds[idx[0]].Buffer.Pos
		end, _ := seeds[idx[0]].Buffer.End()
		n := 1
		for n < len(idx) {
			r := seeds[idx[n]].Buffer
			e, _ := r.End()
			if r.Pos > end+seedReadGap || e-start > maxMetadataSize {
				break
			}
			end = max(end, e)
			n++
		}
		b, err := f.readRange(ctx, int64(start), int64(end-start))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		for _, i := range idx[:n] {
			s := &seeds[i]
			if err != nil {
				s.Err = &seedio.SeedError{Code: "E03", Zone: seedio.NoZone, Err: seedio.ErrSeedBufferMissing, Cause: err,
					Msg: fmt.Sprintf("global buffer %d cannot be read", s.Locator.BufferIndex)}
				continue
			}
			off := s.Buffer.Pos - start
			s.Bytes = b[off : off+s.Buffer.Len : off+s.Buffer.Len]
		}
		idx = idx[n:]
	}
	return nil
}
