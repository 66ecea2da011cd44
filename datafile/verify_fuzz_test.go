package datafile

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// verifyFuzzSeeds are seeded files: ours with v1 and v0 seeds at 2.0, 2.1
// and 2.2 (ints, floats with NaN, strings, lists, fixed-size lists, nulls;
// 64-row zones) and the v0-seeded data files Lance 12 wrote in the corpus
// (seeds_v0_zonemap). Every seed of each is sound.
func verifyFuzzSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "v", Type: arrow.FixedSizeListOfField(2, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for r := range 300 {
		if r%11 == 0 {
			for i := range sch.NumFields() {
				b.Field(i).AppendNull()
			}
			continue
		}
		b.Field(0).(*array.Int32Builder).Append(int32(r*7919%1000 - 500))
		fv := float64(r) / 3
		if r%13 == 0 {
			fv = math.Float64frombits(0xfff8000000000001)
		}
		b.Field(1).(*array.Float64Builder).Append(fv)
		b.Field(2).(*array.StringBuilder).Append(strings.Repeat("é", r%5) + "x")
		lb := b.Field(3).(*array.ListBuilder)
		lb.Append(true)
		for k := range r % 3 {
			lb.ValueBuilder().(*array.Int64Builder).Append(int64(r * k))
		}
		vb := b.Field(4).(*array.FixedSizeListBuilder)
		vb.Append(true)
		vb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(r), -float32(r)}, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out [][]byte
	for _, v := range []FileVersion{V2_0, V2_1, V2_2} {
		for _, v0 := range []bool{false, true} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, sch, WriterOptions{Version: v, SeedAllColumns: true, SeedVersion0: v0, PageSize: 2 << 10,
				Seed: seedio.CollectorOptions{RowsPerZone: 64}})
			if err != nil {
				tb.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				tb.Fatal(err)
			}
			if _, err := w.Close(); err != nil {
				tb.Fatal(err)
			}
			out = append(out, buf.Bytes())
		}
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "lance12", "seeds_v0_zonemap.lance", "data", "*.lance"))
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil || len(raw) > 64<<10 {
			continue
		}
		if f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw))); err == nil {
			if ss, _ := f.Seeds(context.Background(), seedio.DecodeOptions{}); len(ss) > 0 {
				out = append(out, raw) // the files Lance 12 wrote after the ZoneMap declaration
			}
		}
	}
	return out
}

// TestSeedsVerify_R30_FuzzSeedFilesAreSound: the fuzz seeds' seeds are all
// sound (what the fuzzer mutates away from).
func TestSeedsVerify_R30_FuzzSeedFilesAreSound(t *testing.T) {
	for i, raw := range verifyFuzzSeeds(t) {
		f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		vs, err := f.VerifySeeds(context.Background(), VerifyOptions{TableFlagged: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) == 0 {
			t.Errorf("seed file %d has no seeds", i)
		}
		for _, v := range vs {
			if v.Status != SeedSound {
				t.Errorf("seed file %d (%s): %s %+v", i, f.Version(), v.Column, v)
			}
		}
	}
}

// FuzzVerifySeeds (zone-seeds.md R22–R47; what `seeds verify` runs) feeds
// truncated and mutated seeded files to VerifySeeds: no panic, bounded
// memory, only a cancelled context fails the call, and every verdict is
// one of the four with what it promises — unsound names a check (and a
// zone unless the zone count is wrong), unusable/unverified carry an
// error naming the column (decode errors are *FormatError naming column
// and page).
func FuzzVerifySeeds(f *testing.F) {
	for _, b := range verifyFuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := OpenReaderAt(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return // FuzzOpen
		}
		// bounded work too: a length field must not make the audit run
		// for hours (the seeds here cover at most a few thousand rows)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		vs, err := file.VerifySeeds(ctx, VerifyOptions{TableFlagged: true, ReadOptions: ReadOptions{MaxDecodeBytes: 1 << 24}})
		if err != nil {
			t.Fatalf("VerifySeeds failed as a whole (rows %d): %v", file.NumRows(), err)
		}
		for _, v := range vs {
			switch v.Status {
			case SeedSound:
				if v.Err != nil {
					t.Fatalf("sound with an error: %+v", v)
				}
			case SeedUnsound:
				if v.Check == "" || (v.Zone < 0 && v.Check != "zones" && v.Check != "null_bitmap") {
					t.Fatalf("unsound without a check or zone: %+v", v)
				}
			case SeedUnusable:
				if v.Err == nil {
					t.Fatalf("unusable without an error: %+v", v)
				}
			case SeedUnverified:
				if v.Err == nil || !strings.Contains(v.Err.Error(), v.Column) {
					t.Fatalf("unverified without an error naming column %q: %+v", v.Column, v)
				}
				var fe *FormatError
				if strings.HasPrefix(v.Err.Error(), "decoding column") && !errors.As(v.Err, &fe) && !errors.Is(v.Err, ErrTooLarge) && !errors.Is(v.Err, ErrSeedColumnMissing) {
					t.Fatalf("untyped decode error %T: %v", errors.Unwrap(v.Err), v.Err)
				}
			default:
				t.Fatalf("status %q", v.Status)
			}
		}
	})
}
