package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
)

func indexTestDataset(t *testing.T, seeds bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds.lance")
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sch := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "l", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32})}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for i := 0; i < 1000; i++ {
		if i%10 == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
		}
		sb := b.Field(1).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
	}
	rec := b.NewRecordBatch()
	rdr, _ := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
	// 2.0: building a zone map "from data" decodes the column.
	opts := commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 300, DataStorageVersion: "2.0"}
	if seeds {
		opts.SeedColumns, opts.RowsPerZone, opts.Commit.EnableZoneWriteSeeds = []string{"x"}, 100, true
	}
	if _, err := commit.WriteArrow(context.Background(), st, rdr, opts); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestIndexCommands(t *testing.T) {
	dir := indexTestDataset(t, true)
	code, out, errs := runCLI(t, "index", "create", dir, "--column", "x", "--type", "zonemap", "--rows-per-zone", "100", "--json")
	if code != exitOK {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	var b buildJSON
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Name != "x_idx" || b.Fragments != 4 || b.FromSeeds != 4 || b.FromData != 0 || b.PageBytesRead != 0 || b.Zones != 10 || !b.NullBitmap {
		t.Fatalf("create output %+v", b)
	}
	code, out, _ = runCLI(t, "index", "create", dir, "--column", "x", "--type", "zonemap", "--rows-per-zone", "64", "--name", "x64")
	if code != exitOK || !strings.Contains(out, "0 from seeds, 4 from data") || !strings.Contains(out, "seed not used") {
		t.Fatalf("create with another zone size: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "index", "list", dir, "--verify")
	if code != exitOK || !strings.Contains(out, "x_idx") || !strings.Contains(out, "x64") || !strings.Contains(out, "ok (10 zones)") || !strings.Contains(out, "ZoneMap") {
		t.Fatalf("list: %d %s", code, out)
	}
	if code, out, _ = runCLI(t, "index", "update", dir, "--name", "x_idx"); code != exitOK || !strings.Contains(out, "already covers") {
		t.Fatalf("update: %d %s", code, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"index", "create", dir, "--column", "x", "--type", "zonemap", "--rows-per-zone", "100"}, exitBadInput, "exists"},
		{[]string{"index", "create", dir, "--column", "x", "--type", "btree"}, exitBadInput, "only zonemap"},
		{[]string{"index", "create", dir, "--column", "nope", "--type", "zonemap"}, exitBadInput, "no top-level column"},
		{[]string{"index", "create", dir, "--column", "l", "--type", "zonemap"}, exitBadInput, "nested"},
		{[]string{"index", "create", dir, "--column", "x", "--type", "zonemap", "--rows-per-zone", "0"}, exitBadInput, "outside"},
		{[]string{"index", "update", dir, "--name", "nope"}, exitBadInput, "no index"},
		{[]string{"index", "drop", dir, "--name", "nope"}, exitBadInput, "no index"},
		{[]string{"index", "frob", dir}, exitBadInput, "unknown subcommand"},
		{[]string{"index", "create", dir}, exitBadInput, "usage"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
	if code, out, _ = runCLI(t, "index", "drop", dir, "--name", "x64"); code != exitOK || !strings.Contains(out, "dropped index \"x64\"") {
		t.Fatalf("drop: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "index", "list", dir, "--json")
	var l struct {
		Segments []listJSON `json:"segments"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil || code != exitOK || len(l.Segments) != 1 || l.Segments[0].Name != "x_idx" || *l.Segments[0].UseSeeds != true {
		t.Fatalf("list --json: %d %s %v", code, out, err)
	}
}
