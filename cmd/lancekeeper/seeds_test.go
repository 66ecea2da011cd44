package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

func TestParsePredicate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		col  string
		op   seedio.Op
		lits []string
	}{
		{"x > 5", "x", seedio.OpGt, []string{"5"}},
		{"x>=-5.5e3", "x", seedio.OpGe, []string{"-5.5e3"}},
		{"x == 1", "x", seedio.OpEq, []string{"1"}},
		{"x BETWEEN 1 AND 3", "x", seedio.OpBetween, []string{"1", "3"}},
		{"x between -inf and inf", "x", seedio.OpBetween, []string{"-inf", "inf"}},
		{"s = 'abc'", "s", seedio.OpEq, []string{"abc"}},
		{"s = 'it''s'", "s", seedio.OpEq, []string{"it's"}},
		{`"my col" < 'z'`, "my col", seedio.OpLt, []string{"z"}},
		{"`a.b` <= 2", "a.b", seedio.OpLe, []string{"2"}},
		{"x IS NULL", "x", seedio.OpIsNull, nil},
		{"x is not null", "x", seedio.OpIsNotNull, nil},
		{"isnan(x)", "x", seedio.OpIsNaN, nil},
		{"NOT isnan(x)", "x", seedio.OpNotIsNaN, nil},
		{"x IN (1, 2,3)", "x", seedio.OpIn, []string{"1", "2", "3"}},
		{"b = true", "b", seedio.OpEq, []string{"true"}},
		{"bin = x'00ff'", "bin", seedio.OpEq, []string{"00ff"}},
		{"f = nan", "f", seedio.OpEq, []string{"nan"}},
		{"città = 'Roma'", "città", seedio.OpEq, []string{"Roma"}},
	} {
		p, err := parsePredicate(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		var lits []string
		for _, l := range p.Lits {
			lits = append(lits, l.text)
		}
		if p.Column != tc.col || p.Op != tc.op || strings.Join(lits, "|") != strings.Join(tc.lits, "|") {
			t.Errorf("%q: got %q %v %q", tc.in, p.Column, p.Op, lits)
		}
	}
	for _, bad := range []string{"", "x", "x >", "x > 5 6", "x != 5", "x <> 5", "x BETWEEN 1", "x IN ()", "x IN (1,", "isnan(x", "NOT x > 1",
		"x = 'open", "x IS", "x IS NOT", "5 > x", "x = x'0", `"x = 1`, "x ! 1", "x = @"} {
		if _, err := parsePredicate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBindLiteral(t *testing.T) {
	p, _ := parsePredicate("x BETWEEN -1 AND 2.5")
	for _, tc := range []struct {
		dt   arrow.DataType
		want []any
		err  bool
	}{
		{arrow.PrimitiveTypes.Float64, []any{-1.0, 2.5}, false},
		{arrow.PrimitiveTypes.Float32, []any{float32(-1), float32(2.5)}, false},
		{arrow.FixedWidthTypes.Float16, []any{float16.New(-1), float16.New(2.5)}, false},
		{arrow.PrimitiveTypes.Int64, nil, true}, // 2.5 is not an integer
		{arrow.PrimitiveTypes.Uint8, nil, true}, // -1 is out of range
	} {
		got, err := p.bind(tc.dt)
		if (err != nil) != tc.err {
			t.Fatalf("%s: err %v", tc.dt, err)
		}
		if err == nil {
			for i := range tc.want {
				if got.Values[i] != tc.want[i] {
					t.Fatalf("%s: %v", tc.dt, got.Values)
				}
			}
		}
	}
	q, _ := parsePredicate("d = '2026-01-02'")
	got, err := q.bind(arrow.FixedWidthTypes.Date32)
	if err != nil || got.Values[0] != arrow.Date32(20455) {
		t.Fatalf("date: %v %v", got.Values, err)
	}
	n, _ := parsePredicate("f > nan")
	v, _ := n.bind(arrow.PrimitiveTypes.Float64)
	if !math.IsNaN(v.Values[0].(float64)) {
		t.Fatal("nan")
	}
	s, _ := parsePredicate("x = 'a'")
	if _, err := s.bind(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}); err != nil {
		t.Fatal(err)
	}
}

// FuzzParsePredicate: the --where parser takes user input; it must never
// panic, and what it accepts must re-bind without panicking.
func FuzzParsePredicate(f *testing.F) {
	for _, s := range []string{"x > 5", "x BETWEEN 1 AND 3", "s = 'abc'", "x IS NULL", "isnan(x)", "NOT isnan(x)", "x IN (1,2)",
		"`a` = x'00'", `"q" <= -inf`, "s = 'it''s'", "x >= 1e309", "d = '2026-01-01'"} {
		f.Add(s)
	}
	types := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Float16, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Boolean,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us, &arrow.Decimal128Type{Precision: 10, Scale: 2}}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePredicate(s)
		if err != nil {
			return
		}
		if p.Column == "" && !strings.Contains(s, `""`) && !strings.Contains(s, "``") {
			t.Fatalf("%q: empty column", s)
		}
		for _, dt := range types {
			if bp, err := p.bind(dt); err == nil {
				_, _ = seedio.PruneZones(dt, nil, bp)
			}
		}
	})
}

// TestR61_V1SeedInUnflaggedTableIsUnusable: a table whose manifest lacks
// FLAG_ZONE_WRITE_SEEDS but references a data file with a v1 seed (written
// by a careless foreign writer): `seeds` reports the seed unusable (E26)
// and the pruning preview scans that fragment instead of using the seed.
func TestR61_V1SeedInUnflaggedTableIsUnusable(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	good := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, good, 0, 100)
	flagged := filepath.Join(tmp, "flagged")
	if code, _, errs := runCLI(t, "write", flagged, "--from", good, "--seeds", "x", "--rows-per-zone", "10", "--enable-zone-write-seeds"); code != 0 {
		t.Fatal(errs)
	}
	src := latest(t, flagged)
	// Copy the seeded data file into a new dataset whose manifest lies
	// about it (marked as carrying no v1 seed, so no bits are set).
	foreign := filepath.Join(tmp, "foreign")
	df := src.Manifest.GetFragments()[0].GetFiles()[0]
	b, err := os.ReadFile(filepath.Join(flagged, "data", df.GetPath()))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(foreign, "data"), 0o755)
	os.WriteFile(filepath.Join(foreign, "data", df.GetPath()), b, 0o644)
	st, err := store.Open(ctx, foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	txn := commit.NewOverwrite(0, commit.OverwriteSpec{Fragments: []*pb.DataFragment{src.Manifest.GetFragments()[0]}, Schema: src.Manifest.GetFields()})
	txn.MarkSeedFiles(false, df.GetPath())
	if _, err := commit.Commit(ctx, st, txn, commit.Options{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		dir     string
		valid   bool
		scanned int
	}{{flagged, true, 0}, {foreign, false, 1}} {
		code, out, errs := runCLI(t, "seeds", tc.dir, "--json", "--where", "x = 42")
		if code != 0 {
			t.Fatal(errs)
		}
		var rep seedsJSON
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		s := rep.Files[0].Seeds[0]
		if s.Valid != tc.valid || s.Version == nil || *s.Version != 1 {
			t.Fatalf("%s: seed %+v", tc.dir, s)
		}
		if !tc.valid && !strings.Contains(s.Error, "E26") {
			t.Fatalf("want E26, got %q", s.Error)
		}
		if rep.Prune.FragmentsScanned != tc.scanned {
			t.Fatalf("%s: prune %+v", tc.dir, rep.Prune)
		}
		if tc.valid && (rep.Prune.ZonesTotal != 10 || rep.Prune.ZonesKept != 1) {
			t.Fatalf("prune %+v", rep.Prune)
		}
	}
}

func TestSeedsCLI_TextAndEnable(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 50)
	ds := filepath.Join(tmp, "ds")
	if code, _, errs := runCLI(t, "write", ds, "--from", in); code != 0 {
		t.Fatal(errs)
	}
	code, out, _ := runCLI(t, "seeds", "enable", ds)
	if code != 0 || !strings.Contains(out, "version 2 activates FLAG_ZONE_WRITE_SEEDS") {
		t.Fatalf("exit %d: %s", code, out)
	}
	m := latest(t, ds).Manifest
	if m.GetReaderFeatureFlags() != 65536 || m.GetWriterFeatureFlags() != 65536 {
		t.Fatalf("flags %d/%d", m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	}
	code, out, _ = runCLI(t, "seeds", "enable", ds)
	if code != 0 || !strings.Contains(out, "already set") || latest(t, ds).Manifest.GetVersion() != 2 {
		t.Fatalf("second enable: %d %s", code, out)
	}
	// Seeds now need no opt-in.
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--seeds", "all", "--rows-per-zone", "8"); code != 0 {
		t.Fatal(errs)
	}
	code, out, _ = runCLI(t, "seeds", ds, "--where", "s = 's010'", "--zones", "--column", "s")
	if code != 0 || !strings.Contains(out, "FLAG_ZONE_WRITE_SEEDS set") || !strings.Contains(out, "seeded zones kept: 1 of 7") ||
		!strings.Contains(out, `"s008"`) || !strings.Contains(out, "fragments kept:    2 of 2") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// Reading never writes (R56).
	before := listTree(t, ds)
	runCLI(t, "seeds", ds, "--json")
	if strings.Join(listTree(t, ds), ",") != strings.Join(before, ",") {
		t.Fatal("seeds wrote files")
	}
	for _, bad := range [][]string{{"seeds", ds, "--where", "x >"}, {"seeds", ds, "--where", "nope = 1"}, {"seeds", ds, "--where", "x = 'a'"},
		{"seeds", filepath.Join(tmp, "missing")}, {"seeds", "enable", filepath.Join(tmp, "missing")}} {
		if code, _, errs := runCLI(t, bad...); code != exitBadInput {
			t.Fatalf("%v: exit %d %s", bad, code, errs)
		}
	}
}
