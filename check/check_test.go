package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

var schemaX = arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

func rows(n int) array.RecordReader {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range n {
		b.Append(int64(i))
	}
	arr := b.NewArray()
	rec := array.NewRecordBatch(schemaX, []arrow.Array{arr}, int64(n))
	rdr, err := array.NewRecordReader(schemaX, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}

// healthy writes a dataset of two fragments (10 rows each, v1 seeds on x)
// and returns its store.
func healthy(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir()+"/ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := commit.WriteArrow(ctx, st, rows(20), commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 10,
		SeedAllColumns: true, RowsPerZone: 4, Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		t.Fatal(err)
	}
	return st
}

// publish writes m (edited from the latest manifest) as the next version,
// bypassing the commit engine's checks: the damage a buggy or hostile
// writer leaves.
func publish(t *testing.T, st *store.Store, edit func(m *pb.Manifest)) {
	t.Helper()
	ctx := context.Background()
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	m := proto.Clone(f.Manifest).(*pb.Manifest)
	m.Version++
	edit(m)
	data, err := manifest.EncodePrelude(nil, m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, manifest.ManifestPath(manifest.V2, m.Version), data); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, st *store.Store, opts Options) *Report {
	t.Helper()
	rep, err := Dataset(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantProblem(t *testing.T, rep *Report, kind, inReason string) {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Kind == kind && strings.Contains(p.Reason, inReason) {
			return
		}
	}
	t.Fatalf("no %s problem mentioning %q in %v", kind, inReason, rep.Problems)
}

// TestCheck_FindsEveryDamage: each damage the issue lists (issue 15 ★) is
// found and named with its file and reason; the healthy dataset is clean.
func TestCheck_FindsEveryDamage(t *testing.T) {
	ctx := context.Background()
	if rep := run(t, healthy(t), Options{}); !rep.OK() || rep.Files != 2 || rep.Seeds != 2 {
		t.Fatalf("healthy dataset: %+v", rep)
	}
	cases := []struct {
		name, kind, reason string
		damage             func(t *testing.T, st *store.Store)
	}{
		{"missing data file", KindMissingFile, "does not exist", func(t *testing.T, st *store.Store) {
			m := latestManifest(t, st)
			if err := st.Delete(ctx, manifest.DataDir+"/"+m.GetFragments()[0].GetFiles()[0].GetPath()); err != nil {
				t.Fatal(err)
			}
		}},
		{"wrong size", KindWrongSize, "file_size_bytes", func(t *testing.T, st *store.Store) {
			publish(t, st, func(m *pb.Manifest) { m.Fragments[0].Files[0].FileSizeBytes++ })
		}},
		{"duplicate data file", KindDuplicateDataFile, "fragment 0", func(t *testing.T, st *store.Store) {
			publish(t, st, func(m *pb.Manifest) { m.Fragments[1].Files = m.Fragments[0].Files })
		}},
		{"duplicate fragment id", KindDuplicateFragment, "twice", func(t *testing.T, st *store.Store) {
			publish(t, st, func(m *pb.Manifest) { m.Fragments[1].Id = 0 })
		}},
		{"fragment id above max", KindFragmentIDAbove, "max_fragment_id", func(t *testing.T, st *store.Store) {
			publish(t, st, func(m *pb.Manifest) { m.Fragments[1].Id = 7 })
		}},
		{"row count", KindRowCount, "records 3 physical rows", func(t *testing.T, st *store.Store) {
			publish(t, st, func(m *pb.Manifest) { m.Fragments[0].PhysicalRows = 3 })
		}},
		{"deletion out of range", KindDeletion, "the fragment has 10 rows", func(t *testing.T, st *store.Store) {
			typ, data, err := manifest.EncodeDeletionFile(roaring.BitmapOf(2, 15))
			if err != nil {
				t.Fatal(err)
			}
			d := &pb.DeletionFile{FileType: typ, ReadVersion: 1, Id: 42, NumDeletedRows: 2}
			name, err := manifest.DeletionFileName(0, d)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, manifest.DeletionsDir+"/"+name, data); err != nil {
				t.Fatal(err)
			}
			publish(t, st, func(m *pb.Manifest) {
				m.Fragments[0].DeletionFile = d
				m.ReaderFeatureFlags |= flags.DeletionFiles
				m.WriterFeatureFlags |= flags.DeletionFiles
			})
		}},
		{"half-set paired flag", KindFlags, "", func(t *testing.T, st *store.Store) {
			publish(t, st, func(m *pb.Manifest) { m.WriterFeatureFlags &^= flags.ZoneWriteSeeds })
		}},
		{"v1 seeds without the flag", KindSeed, "seed of column", func(t *testing.T, st *store.Store) {
			publish(t, st, func(m *pb.Manifest) {
				m.ReaderFeatureFlags &^= flags.ZoneWriteSeeds
				m.WriterFeatureFlags &^= flags.ZoneWriteSeeds
			})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := healthy(t)
			c.damage(t, st)
			rep := run(t, st, Options{})
			wantProblem(t, rep, c.kind, c.reason)
			for _, p := range rep.Problems {
				if p.Reason == "" || p.Kind == "" || (p.File == "" && p.Kind != KindFlags && p.Fragment == nil) {
					t.Fatalf("problem without file or reason: %+v", p)
				}
			}
			// --all-versions sees version 1 clean unless the damage hit a
			// file it shares.
			all := run(t, st, Options{AllVersions: true})
			if len(all.Versions) < 1 || len(all.Problems) < len(rep.Problems) {
				t.Fatalf("all versions: %+v", all)
			}
		})
	}
}

func latestManifest(t *testing.T, st *store.Store) *pb.Manifest {
	t.Helper()
	f, _, err := manifest.LoadLatest(context.Background(), st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	return f.Manifest
}

// TestCheck_Lance12CorpusIsClean: the latest version of every Lance 12
// table of the shared corpus checks clean (no false alarm on real Lance
// output: 2.0, 2.1, legacy files, deletions, indices, branches' main).
func TestCheck_Lance12CorpusIsClean(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "lance-corpus", "lance12")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the shared corpus is required: %v", err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), ".lance") {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			st, err := store.Open(context.Background(), filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			rep := run(t, st, Options{})
			if !rep.OK() {
				t.Fatalf("problems on a Lance 12 table: %v", rep.Problems)
			}
		})
	}
	if n == 0 {
		t.Fatal("no corpus table found")
	}
}

// TestCheck_SeedsAudit: with Seeds the audit of `seeds verify` runs too; a
// healthy dataset stays clean.
func TestCheck_SeedsAudit(t *testing.T) {
	rep := run(t, healthy(t), Options{Seeds: true})
	if !rep.OK() || rep.Seeds != 2 {
		t.Fatalf("%+v", rep)
	}
}
