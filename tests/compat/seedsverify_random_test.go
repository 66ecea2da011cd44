package compat_test

import (
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// withZeroHeavyFloats returns rec with three more columns, zf16, zf32 and
// zf64, whose values are mostly −0.0 and +0.0, beside NaNs of both signs,
// nulls, ±1 and random values.
func withZeroHeavyFloats(rec arrow.RecordBatch, seed uint64) arrow.RecordBatch {
	rng := mrand.New(mrand.NewPCG(seed, 0x2e0))
	mem := memory.NewGoAllocator()
	n := int(rec.NumRows())
	b16, b32, b64 := array.NewFloat16Builder(mem), array.NewFloat32Builder(mem), array.NewFloat64Builder(mem)
	defer b16.Release()
	defer b32.Release()
	defer b64.Release()
	for i := 0; i < n; i++ {
		var v float64
		switch rng.IntN(10) {
		case 0, 1, 2:
			v = math.Copysign(0, -1)
		case 3, 4, 5:
			v = 0
		case 6:
			b16.AppendNull()
			b32.AppendNull()
			b64.AppendNull()
			continue
		case 7:
			v = math.Copysign(math.NaN(), float64(rng.IntN(2)*2-1))
		case 8:
			v = float64(rng.IntN(3) - 1)
		default:
			v = rng.NormFloat64() * 100
		}
		h := float16.New(float32(v)).Uint16()
		if math.IsNaN(v) {
			h = 0x7e00 | uint16(b2u(math.Signbit(v)))<<15
		}
		b16.Append(float16.FromBits(h))
		b32.Append(float32(v))
		b64.Append(v)
	}
	fields := append(rec.Schema().Fields(),
		arrow.Field{Name: "zf16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		arrow.Field{Name: "zf32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		arrow.Field{Name: "zf64", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	cols := append(append([]arrow.Array(nil), rec.Columns()...), b16.NewArray(), b32.NewArray(), b64.NewArray())
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
	for _, c := range cols[len(cols)-3:] {
		c.Release()
	}
	return out
}

func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// TestLance12_RandomTablesV0SeedsVerify (issue 12 item 3, "seeds verify
// passes on every seeded table"): Lance 12 writes v0 seeds for random
// tables at storage 2.1 and 2.2 (random schemas of tests/peerlance plus
// float16/32/64 columns full of −0.0, +0.0 and NaNs of both signs; a
// ZoneMap index declared on every column, 3–15 rows per zone) and
// inspect.AuditSeeds — what `seeds verify` runs — proves every seed of the
// appended data file sound: no false "unsound" on Lance's exact zero
// bounds, none that holds only read widened.
func TestLance12_RandomTablesV0SeedsVerify(t *testing.T) {
	p := peerlance.ServeForTest(t)
	for _, sv := range []string{"2.1", "2.2"} {
		t.Run("storage"+sv, func(t *testing.T) {
			record(t, catLanceToUs)
			ctx := peerContext(t)
			tmp := t.TempDir()
			const tables = 8
			seeds, refused, bothZeros := 0, 0, 0
			for seed := uint64(1); seed <= tables; seed++ {
				base := peerlance.RandomTable(seed+240, peerlance.RandomTableOptions{StorageVersion: sv, MaxRows: 300})
				rec := withZeroHeavyFloats(base, seed)
				base.Release()
				desc := fmt.Sprintf("seed %d (%d rows, schema %s)", seed, rec.NumRows(), strings.ReplaceAll(rec.Schema().String(), "\n", " "))
				dir := filepath.Join(tmp, fmt.Sprintf("t%d.lance", seed))
				first := rec.NewSlice(0, 1)
				createIPC := filepath.Join(tmp, fmt.Sprintf("c%d.arrow", seed))
				appendIPC := filepath.Join(tmp, fmt.Sprintf("a%d.arrow", seed))
				err := peerlance.WriteIPCFile(createIPC, first.Schema(), first)
				first.Release()
				if err == nil {
					err = peerlance.WriteIPCFile(appendIPC, rec.Schema(), rec)
				}
				if err != nil {
					t.Fatal(err)
				}
				if _, err := p.Create(ctx, dir, createIPC, peerlance.CreateOptions{StorageVersion: sv}); err != nil {
					if errors.As(err, new(*peerlance.LanceError)) {
						t.Logf("%s: Lance 12 refuses to create it: %v", desc, err)
						refused++
						rec.Release()
						continue
					}
					t.Fatalf("%s: %v", desc, err)
				}
				rpz := 3 + seed%13
				declareZoneMaps(ctx, t, dir, rpz)
				res, err := p.Append(ctx, dir, appendIPC)
				if err != nil {
					if errors.As(err, new(*peerlance.LanceError)) {
						t.Logf("%s: Lance 12 refuses the append with zone maps declared: %v", desc, err)
						refused++
						rec.Release()
						continue
					}
					t.Fatalf("%s: %v", desc, err)
				}
				d, err := snapshot.OpenDataset(ctx, dir)
				if err != nil {
					t.Fatal(err)
				}
				snap, err := d.Checkout(ctx, snapshot.Options{Ref: snapshot.Ref{Version: res.Version}})
				if err != nil {
					t.Fatal(err)
				}
				if got := snap.Manifest().GetDataFormat().GetVersion(); got != sv {
					t.Fatalf("%s: Lance wrote storage %s", desc, got)
				}
				a, err := inspect.AuditSeeds(ctx, d.Store(), snap.Manifest(), "")
				d.Close()
				if err != nil {
					t.Fatal(err)
				}
				if !a.AllSound() || a.Sound == 0 {
					t.Errorf("%s: %d sound, %d unsound, %d unusable, %d unverified, %d files unreadable", desc, a.Sound, a.Unsound, a.Unusable, a.Unverified, a.FilesUnreadable)
				}
				for _, fa := range a.Files {
					for _, v := range fa.Seeds {
						if v.Status != datafile.SeedSound {
							t.Errorf("%s: %s seed %s: v%d %s (zone %d %s: real %v, seed %v, %v)", desc, fa.Path, v.Column, v.Version, v.Status, v.Zone, v.Check, v.Value, v.Bound, v.Err)
						}
						if v.ZeroWidened != 0 {
							t.Errorf("%s: %s seed %s: %d zero bound(s) sound only read widened; Lance 12 writes exact extrema", desc, fa.Path, v.Column, v.ZeroWidened)
						}
					}
				}
				seeds += a.Sound
				// Zones of zf16 holding both zeros (coverage of the case).
				zf := rec.Column(int(rec.NumCols()) - 3).(*array.Float16)
				for start := 0; start < zf.Len(); start += int(rpz) {
					neg, pos := false, false
					for i := start; i < min(zf.Len(), start+int(rpz)); i++ {
						if zf.IsValid(i) {
							neg = neg || zf.Value(i).Uint16() == 0x8000
							pos = pos || zf.Value(i).Uint16() == 0
						}
					}
					if neg && pos {
						bothZeros++
					}
				}
				rec.Release()
			}
			if refused > tables/4 {
				t.Errorf("Lance 12 refused %d of %d tables", refused, tables)
			}
			if bothZeros == 0 {
				t.Error("no float16 zone held both zeros")
			}
			t.Logf("storage %s: %d tables, %d seeds Lance 12 wrote all sound (%d float16 zones hold both zeros); %d refused by Lance", sv, tables-refused, seeds, bothZeros, refused)
		})
	}
}
