package compat_test

// Signed zeros (zone-seeds.md R39, Q16, §5.4 "Engines with IEEE semantics"):
// what Lance 12 writes as v0 seeds for float16/32/64 zones holding −0.0,
// +0.0 and NaNs of both signs, how Lance 12's own filters compare zeros,
// and that our pruned scan returns Lance's rows with those seeds in use.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
	"github.com/lancekeeper/lancekeeper/zonemap"
)

// Row values of the signed-zero table, as float64 (the sign of a zero and
// of a NaN kept); nzNull is a null row.
var (
	nzNegZero = math.Copysign(0, -1)
	nzPosNaN  = math.NaN()
	nzNegNaN  = math.Copysign(math.NaN(), -1)
	nzNull    = math.Inf(1) // placeholder: no zone below holds +Inf, it stands for null
)

// signedZeroZones are the zones (4 rows each, the last one short) of the
// appended batch: every order of the two zeros, zeros beside positive and
// negative values, zeros beside NaNs of both signs, and zones without
// zeros.
func signedZeroZones() [][]float64 {
	n0 := nzNegZero
	return [][]float64{
		{n0, 0, n0, 0},
		{0, n0, 0, n0},
		{0, 0, 1, 2},
		{n0, 1, 2, 3},
		{-1, n0, -2, nzNull},
		{-1, 0, -3, -2},
		{n0, n0, n0, n0},
		{0, 0, 0, 0},
		{n0, nzPosNaN, nzNegNaN, 5},
		{0, nzNegNaN, 1, nzNull},
		{1, 2, 3, 4},
		{-5, 5, n0, 0},
		{-1, -2, -3, -4},
		{nzPosNaN, 0, nzNegNaN, n0},
		{0, n0},
	}
}

const signedZeroRowsPerZone = 4

// signedZeroBatch is id (from first) and the same values in f16, f32 and
// f64 columns.
func signedZeroBatch(first int64, vals []float64) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i, v := range vals {
		b.Field(0).(*array.Int64Builder).Append(first + int64(i))
		if v == nzNull {
			for c := 1; c <= 3; c++ {
				b.Field(c).AppendNull()
			}
			continue
		}
		// Conversions keep the sign of zeros and NaNs; NaN payloads are
		// the canonical quiet ones of each width.
		h := float16.New(float32(v)).Uint16()
		f := math.Float32bits(float32(v))
		if math.IsNaN(v) {
			h, f = 0x7e00, 0x7fc00000
			if math.Signbit(v) {
				h, f = 0xfe00, 0xffc00000
			}
		}
		b.Field(1).(*array.Float16Builder).Append(float16.FromBits(h))
		b.Field(2).(*array.Float32Builder).Append(math.Float32frombits(f))
		b.Field(3).(*array.Float64Builder).Append(v)
	}
	return b.NewRecordBatch()
}

// zeroPred is one filter over a float column: an operator and its
// literals (as float64, signs kept). sql writes it for a column; Float16
// literals are written arrow_cast(L, 'Float16') because Lance 12 refuses a
// Float64 or Int64 literal against a Float16 column.
type zeroPred struct {
	op   string // "<", "<=", "=", ">=", ">", "IN", "BETWEEN"
	lits []string
}

func (zp zeroPred) sql(col string) string {
	lit := func(l string) string {
		if col == "f16" {
			return "arrow_cast(" + l + ", 'Float16')"
		}
		return l
	}
	switch zp.op {
	case "IN":
		var ls []string
		for _, l := range zp.lits {
			ls = append(ls, lit(l))
		}
		return fmt.Sprintf("%s IN (%s)", col, strings.Join(ls, ", "))
	case "BETWEEN":
		return fmt.Sprintf("%s BETWEEN %s AND %s", col, lit(zp.lits[0]), lit(zp.lits[1]))
	}
	return fmt.Sprintf("%s %s %s", col, zp.op, lit(zp.lits[0]))
}

// selects reports whether the operator selects x (not null) when values
// compare with cmp.
func (zp zeroPred) selects(x float64, cmp func(a, b float64) int) bool {
	var v []float64
	for _, l := range zp.lits {
		f, err := strconv.ParseFloat(l, 64)
		if err != nil {
			panic(err)
		}
		v = append(v, f)
	}
	switch zp.op {
	case "<":
		return cmp(x, v[0]) < 0
	case "<=":
		return cmp(x, v[0]) <= 0
	case "=":
		return cmp(x, v[0]) == 0
	case ">=":
		return cmp(x, v[0]) >= 0
	case ">":
		return cmp(x, v[0]) > 0
	case "IN":
		return slices.ContainsFunc(v, func(w float64) bool { return cmp(x, w) == 0 })
	case "BETWEEN":
		return cmp(x, v[0]) >= 0 && cmp(x, v[1]) <= 0
	}
	panic(zp.op)
}

// The three float comparisons the test tells apart. IEEE 754: −0 = +0,
// NaN unordered (every comparison false). totalOrder (Arrow Rust's
// ordering, §4, the order of seed bounds): −NaN < −Inf < … < −0 < +0 < … <
// +Inf < +NaN. lance12: what Lance 12's filters do (observed below):
// totalOrder after −0 is read as +0 — zeros equal, a NaN below (negative)
// or above (positive) every other value.
func cmpIEEE(a, b float64) int {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return 2 // unordered: neither <, =, nor >
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpTotal(a, b float64) int {
	return cmp.Compare(totalKey(math.Float64bits(a), 64), totalKey(math.Float64bits(b), 64))
}

func cmpLance12(a, b float64) int {
	if a == 0 {
		a = 0
	}
	if b == 0 {
		b = 0
	}
	return cmpTotal(a, b)
}

func signedZeroPredicates() []zeroPred {
	p := func(op string, lits ...string) zeroPred { return zeroPred{op, lits} }
	return []zeroPred{
		p("<", "0"), p("<", "0.0"), p("<", "-0.0"),
		p("<=", "0"), p("<=", "-0.0"), p("<=", "0.0"),
		p("=", "0"), p("=", "0.0"), p("=", "-0.0"),
		p(">=", "0.0"), p(">=", "-0.0"),
		p(">", "-0.0"), p(">", "0.0"), p(">", "0"),
		p("IN", "0.0"), p("IN", "-0.0"), p("IN", "-0.0", "5.0"), p("IN", "-1.0", "0.0"),
		p("BETWEEN", "-0.0", "0.0"), p("BETWEEN", "0.0", "0.0"), p("BETWEEN", "-0.0", "-0.0"),
		p("BETWEEN", "-1.0", "-0.0"), p("BETWEEN", "0.0", "1.0"), p("BETWEEN", "-2.0", "0.0"),
	}
}

// TestLance12_SignedZeros_V0SeedsFiltersAndOurScan establishes, with real
// Lance 12, for float16/float32/float64 columns whose zones hold −0.0,
// +0.0 and NaNs of both signs:
//
//  1. the v0 seeds Lance 12 writes: min/max bytes per zone equal the exact
//     extrema in IEEE totalOrder (a zone holding both zeros gets min −0,
//     max +0, whatever their order; a +0-only zone min +0; the +NaN
//     marker as max whenever the zone has a NaN, §3.6) — no R39 widening;
//  2. how Lance 12's filters compare: IEEE 754 (−0 = +0; NaN matches no
//     comparison), for <, <=, =, >=, >, IN and BETWEEN with zero literals
//     written 0, 0.0 and -0.0;
//  3. our pruned scan returns exactly Lance's rows for every such filter,
//     with the v0 seeds in use (the seeded fragment's term lists "seed v0"),
//     and without pruning;
//  4. `seeds verify` proves every seed Lance wrote sound (the exact
//     extrema, not R39-widened ones, are what the seed is checked against).
func TestLance12_SignedZeros_V0SeedsFiltersAndOurScan(t *testing.T) {
	p := peerlance.ServeForTest(t)
	for _, storage := range []string{"2.0", "2.2"} {
		t.Run("storage"+storage, func(t *testing.T) {
			record(t, catLanceToUs)
			ctx := peerContext(t)
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "zeros.lance")
			first := signedZeroBatch(0, []float64{7})
			defer first.Release()
			ipc0 := filepath.Join(tmp, "create.arrow")
			if err := peerlance.WriteIPCFile(ipc0, first.Schema(), first); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Create(ctx, dir, ipc0, peerlance.CreateOptions{StorageVersion: storage}); err != nil {
				t.Fatal(err)
			}
			declareZoneMaps(ctx, t, dir, signedZeroRowsPerZone)
			var vals []float64
			for _, z := range signedZeroZones() {
				vals = append(vals, z...)
			}
			rec := signedZeroBatch(100, vals)
			defer rec.Release()
			ipc1 := filepath.Join(tmp, "append.arrow")
			if err := peerlance.WriteIPCFile(ipc1, rec.Schema(), rec); err != nil {
				t.Fatal(err)
			}
			res, err := p.Append(ctx, dir, ipc1)
			if err != nil {
				t.Fatal(err)
			}
			d, err := snapshot.OpenDataset(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			frags := newFragments(ctx, t, d, res.Version)
			if len(frags) != 1 || len(frags[0].GetFiles()) != 1 {
				t.Fatalf("append: %d new fragments", len(frags))
			}
			f := openDataFile(ctx, t, d, frags[0].GetFiles()[0])

			// 1. The v0 seeds' bytes: exact totalOrder extrema (naiveZones),
			// checked value by value against what Lance stored.
			seeds, err := f.Seeds(ctx, seedio.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			floats := 0
			for _, s := range seeds {
				ci := rec.Schema().FieldIndices(s.Column)[0]
				if s.Column == "id" {
					continue
				}
				floats++
				naive := naiveZones(t, rec.Column(ci), signedZeroRowsPerZone)
				checkRawV0Seed(t, fmt.Sprintf("seed %q", s.Column), s.Bytes, rec.Column(ci), naive)
				if storage == "2.2" {
					var zs []string
					for i, z := range naive {
						zs = append(zs, fmt.Sprintf("z%d[%s,%s]", i, z.min, z.max))
					}
					t.Logf("Lance 12 v0 seed %s (= exact totalOrder extrema): %s", s.Column, strings.Join(zs, " "))
				}
			}
			if floats != 3 {
				t.Fatalf("%d float seeds, want 3", floats)
			}

			// 4. seeds verify: every seed sound.
			verdicts, err := f.VerifySeeds(ctx, datafile.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range verdicts {
				if v.Status != datafile.SeedSound {
					t.Errorf("verify %s: %s (zone %d %s: value %v, bound %v, %v)", v.Column, v.Status, v.Zone, v.Check, v.Value, v.Bound, v.Err)
				}
			}

			// 2 and 3. Filters: Lance's rows against each comparison, and ours.
			all := append([]float64{7}, vals...)
			idOf := func(i int) uint64 {
				if i == 0 {
					return 0 // the created row
				}
				return uint64(99 + i)
			}
			var preds []string
			var zps []zeroPred
			for _, col := range []string{"f16", "f32", "f64"} {
				for _, zp := range signedZeroPredicates() {
					preds, zps = append(preds, zp.sql(col)), append(zps, zp)
				}
			}
			lance, lerrs, err := lanceScanMany(ctx, p, dir, preds)
			if err != nil {
				t.Fatal(err)
			}
			notIEEE, notTotal, zonesKept, zonesTotal := 0, 0, 0, 0
			for i, pred := range preds {
				if lerrs[i] != nil {
					t.Errorf("%q: Lance 12 refuses it: %v", pred, lerrs[i])
					continue
				}
				var got []uint64
				for _, r := range lance[i].rows {
					got = append(got, uint64(canonicalInt(r[0])))
				}
				want := map[string][]uint64{}
				for name, c := range map[string]func(a, b float64) int{"ieee": cmpIEEE, "total": cmpTotal, "lance12": cmpLance12} {
					want[name] = []uint64{}
					for j, x := range all {
						if x != nzNull && zps[i].selects(x, c) {
							want[name] = append(want[name], idOf(j))
						}
					}
				}
				if got == nil {
					got = []uint64{}
				}
				if !slices.Equal(got, want["lance12"]) {
					t.Errorf("%q: Lance 12 selects ids %v; zeros-equal totalOrder selects %v (IEEE %v, totalOrder %v)", pred, got, want["lance12"], want["ieee"], want["total"])
				}
				if !slices.Equal(got, want["ieee"]) {
					notIEEE++
				}
				if !slices.Equal(got, want["total"]) {
					notTotal++
				}
				for _, noPrune := range []bool{false, true} {
					ours, err := ourScan(ctx, dir, pred, noPrune)
					if err != nil {
						t.Errorf("%q (noPrune %v): %v", pred, noPrune, err)
						continue
					}
					if diff := diffScan(ours, lance[i]); diff != "" {
						t.Errorf("%q (noPrune %v): %s", pred, noPrune, diff)
					}
				}
				k, n := checkSeedsUsed(ctx, t, dir, pred, frags[0].GetId(), "seed v0")
				zonesKept, zonesTotal = zonesKept+k, zonesTotal+n
			}
			if zonesKept >= zonesTotal {
				t.Errorf("the v0 seeds pruned no zone (%d of %d kept)", zonesKept, zonesTotal)
			}
			// The facts the table pins: Lance 12 is neither IEEE (a NaN
			// matches x < 0 / x > 0 by its sign) nor totalOrder (x < 0
			// leaves −0 out, x <= -0.0 takes +0).
			if notIEEE == 0 || notTotal == 0 {
				t.Errorf("Lance 12 differs from IEEE on %d filters and from totalOrder on %d; the table should tell both apart", notIEEE, notTotal)
			}
			t.Logf("%d filters: Lance 12 = zeros-equal totalOrder on every one; differs from IEEE on %d, from totalOrder on %d; seeds kept %d of %d zones", len(preds), notIEEE, notTotal, zonesKept, zonesTotal)

			// 5. Seeds whose zero bound hides the other zero, as a writer
			// comparing with IEEE equality may write them: zone 0 (−0 and
			// +0) gets min +0, zone 1 (+0 and −0) max −0, in place in every
			// float seed. They still validate; read widened (R39 on read)
			// they are sound, verify says so and counts them, and our
			// pruned scan still returns Lance's rows for every filter.
			path := filepath.Join(dir, manifest.DataDir, frags[0].GetFiles()[0].GetPath())
			for _, s := range seeds {
				w := map[string]int{"f16": 2, "f32": 4, "f64": 8}[s.Column]
				if w == 0 {
					continue
				}
				patchSeedValue(t, path, s, 0, 0, make([]byte, w)) // min +0
				negZero := make([]byte, w)
				negZero[w-1] = 0x80
				patchSeedValue(t, path, s, 1, 1, negZero) // max −0
			}
			f = openDataFile(ctx, t, d, frags[0].GetFiles()[0])
			verdicts, err = f.VerifySeeds(ctx, datafile.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range verdicts {
				want := map[bool]int{true: 2}[v.Column != "id"]
				if v.Status != datafile.SeedSound || v.ZeroWidened != want || (want > 0 && (v.WidenedZone != 0 || v.WidenedCheck != "min")) {
					t.Errorf("verify %s after hiding zeros: %s, %d zero bound(s) widened (first zone %d %s), want sound with %d (%v)", v.Column, v.Status, v.ZeroWidened, v.WidenedZone, v.WidenedCheck, want, v.Err)
				}
			}
			for i, pred := range preds {
				if lance[i] == nil {
					continue
				}
				ours, err := ourScan(ctx, dir, pred, false)
				if err != nil {
					t.Errorf("%q with zero-hiding seeds: %v", pred, err)
				} else if diff := diffScan(ours, lance[i]); diff != "" {
					t.Errorf("%q with zero-hiding seeds: %s", pred, diff)
				}
			}
			// A bound that excludes a real non-zero value is unsound:
			// zone 10 (1, 2, 3, 4) of f64 gets min 2.
			if seeds, err = f.Seeds(ctx, seedio.DecodeOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, s := range seeds {
				if s.Column == "f64" {
					two := make([]byte, 8)
					binary.LittleEndian.PutUint64(two, math.Float64bits(2))
					patchSeedValue(t, path, s, 0, 10, two)
				}
			}
			verdicts, err = openDataFile(ctx, t, d, frags[0].GetFiles()[0]).VerifySeeds(ctx, datafile.VerifyOptions{Column: "f64"})
			if err != nil {
				t.Fatal(err)
			}
			if len(verdicts) != 1 || verdicts[0].Status != datafile.SeedUnsound || verdicts[0].Zone != 10 || verdicts[0].Check != "min" ||
				verdicts[0].Value != 1.0 || verdicts[0].Bound != 2.0 {
				t.Errorf("verify f64 with zone 10's min raised to 2: %+v", verdicts)
			}
		})
	}
}

// patchSeedValue overwrites, in the data file at path, value zone of
// column col (0 min, 1 max) of the uncompressed IPC seed si with v: the
// column's values are found as a unique byte run in the seed's buffer.
func patchSeedValue(t *testing.T, path string, si datafile.SeedInfo, col, zone int, v []byte) {
	t.Helper()
	r, err := ipc.NewFileReader(bytes.NewReader(si.Bytes))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	data := rec.Column(col).Data()
	w := len(v)
	needle := data.Buffers()[1].Bytes()[data.Offset()*w : (data.Offset()+data.Len())*w]
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := raw[si.Buffer.Pos : si.Buffer.Pos+si.Buffer.Len]
	if bytes.Count(buf, needle) != 1 {
		t.Fatalf("seed %s: column %d's values occur %d times in the buffer", si.Column, col, bytes.Count(buf, needle))
	}
	copy(buf[bytes.Index(buf, needle)+zone*w:], v)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkSeedsUsed asserts that the scan's plan for pred prunes fragment
// frag with a seed of the given kind ("seed v0"/"seed v1") and returns the
// plan's zone counts for it.
func checkSeedsUsed(ctx context.Context, t *testing.T, dir, pred string, frag uint64, source string) (kept, total int) {
	t.Helper()
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := scan.New(ctx, d, scan.Options{Filter: pred})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plan, err := s.Explain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, fp := range plan.Fragments {
		if fp.ID != frag {
			continue
		}
		for _, tp := range fp.Terms {
			if slices.Contains(tp.Sources, source) {
				return tp.ZonesKept, tp.ZonesTotal
			}
		}
		t.Errorf("%q: fragment %d's plan uses no %s: %+v", pred, frag, source, fp.Terms)
		return 0, 0
	}
	t.Errorf("%q: fragment %d not in the plan", pred, frag)
	return 0, 0
}

// TestLance12_SignedZeros_ZoneMapIndexLanceBuilds: the ZoneMap index
// segments Lance 12 builds itself (its optimize rewrites the index we
// created over two fragments into one over the compacted fragment) hold,
// for float16/32/64 zones with −0.0 and +0.0, the exact totalOrder
// extrema too (a zone of −0 and +0: min −0, max +0; of +0 and positives:
// min +0), NaN-free zones compared bit by bit; our reader widens them like
// seed bounds (seedio.WidenZeroBound) when it prunes.
func TestLance12_SignedZeros_ZoneMapIndexLanceBuilds(t *testing.T) {
	record(t, catIndex)
	p := peerlance.ServeForTest(t)
	ctx := peerContext(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "zm.lance")
	var vals []float64
	for _, z := range signedZeroZones() {
		vals = append(vals, z...)
	}
	for i, part := range [][]float64{vals[:29], vals[29:]} { // two fragments: Lance's optimize compacts them and rewrites the index
		rec := signedZeroBatch(int64(i*29), part)
		ipcFile := filepath.Join(tmp, fmt.Sprintf("p%d.arrow", i))
		if err := peerlance.WriteIPCFile(ipcFile, rec.Schema(), rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		var err error
		if i == 0 {
			_, err = p.Create(ctx, dir, ipcFile, peerlance.CreateOptions{StorageVersion: "2.2"})
		} else {
			_, err = p.Append(ctx, dir, ipcFile)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ours := map[string]bool{}
	for _, c := range []string{"f16", "f32", "f64"} {
		r, err := zonemap.Create(ctx, st, zonemap.CreateOptions{Column: c, RowsPerZone: signedZeroRowsPerZone})
		if err != nil {
			t.Fatal(err)
		}
		u, _ := manifest.IndexUUID(r.Segment)
		ours[u] = true
	}
	if _, err := p.Optimize(ctx, dir); err != nil {
		t.Fatal(err)
	}
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	frags := f.Manifest.GetFragments()
	if len(frags) != 1 {
		t.Fatalf("%d fragments after Lance's optimize, want 1", len(frags))
	}
	df, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(manifest.DataDir+"/"+frags[0].GetFiles()[0].GetPath()), datafile.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checked, zeroZones := 0, 0
	for _, idx := range f.Indices() {
		u, _ := manifest.IndexUUID(idx)
		if !zonemap.IsZoneMap(idx) || ours[u] {
			continue
		}
		seg, err := zonemap.ReadSegment(ctx, st.Bucket(), st.KeyPrefix()+"_indices/"+u+"/zonemap.lance", zonemap.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		col := strings.TrimSuffix(idx.GetName(), "_idx")
		fi := df.Schema().FieldByName(col)
		rec, err := df.ReadRows(ctx, datafile.ReadRequest{Fields: []int{fi}, Ranges: []datafile.RowRange{{Start: 0, End: df.NumRows()}}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := seedio.NewCollector(arrow.Field{Name: col, Type: rec.Column(0).DataType(), Nullable: true}, seedio.CollectorOptions{RowsPerZone: seg.RowsPerZone, ExactZeros: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Observe(rec.Column(0)); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		exact, err := c.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if len(seg.Zones) != len(exact.Zones) {
			t.Fatalf("%s: Lance's segment has %d zones, the fragment %d", col, len(seg.Zones), len(exact.Zones))
		}
		var got []string
		for i, z := range seg.Zones {
			e := exact.Zones[i]
			if reprValue(z.Min) != reprValue(e.Min) {
				t.Errorf("%s zone %d: Lance's index min %s, exact %s", col, i, reprValue(z.Min), reprValue(e.Min))
			}
			if e.NaNCount == 0 && reprValue(z.Max) != reprValue(e.Max) {
				t.Errorf("%s zone %d: Lance's index max %s, exact %s", col, i, reprValue(z.Max), reprValue(e.Max))
			}
			if _, w := seedio.WidenZeroBound(z.Min, false); w {
				zeroZones++
			}
			got = append(got, fmt.Sprintf("[%s,%s]", reprValue(z.Min), reprValue(z.Max)))
			checked++
		}
		t.Logf("Lance 12 ZoneMap segment %s: %s", col, strings.Join(got, " "))
	}
	if checked == 0 {
		t.Fatal("Lance's optimize wrote no ZoneMap segment to check")
	}
	if zeroZones == 0 {
		t.Error("no zone of Lance's segments has a +0 min (the case R39-on-read widens)")
	}
}
