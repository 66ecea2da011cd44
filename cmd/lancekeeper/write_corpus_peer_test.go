package main

// Issue 12 item 2, through the CLI: `write --mode append`, with and
// without seeds, on a copy of EVERY table of the shared corpus, compared
// with Lance 12 appending the same rows to another copy. Where Lance 12
// appends, so do we (at the table's data storage version, when it is one
// this build writes) and Lance 12 then reads the same rows from our copy as
// from its own; where Lance 12 refuses, we refuse too.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// corpusTables lists every dataset directory of the corpus (relative).
func corpusTables(t *testing.T, corpus string) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"lance12/*", "historical/*/*"} {
		m, err := filepath.Glob(filepath.Join(corpus, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			if fi, err := os.Stat(filepath.Join(p, "_versions")); err == nil && fi.IsDir() {
				rel, _ := filepath.Rel(corpus, p)
				out = append(out, rel)
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("only %d corpus tables found under %s", len(out), corpus)
	}
	return out
}

// headArrowSchema is the Arrow schema of the table's latest version and
// its data storage version.
func headArrowSchema(ctx context.Context, t *testing.T, dir string) (*arrow.Schema, string, error) {
	t.Helper()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), strings.TrimSuffix(st.KeyPrefix(), "/"))
	if err != nil {
		return nil, "", err
	}
	ls := &datafile.Schema{}
	at := map[int32]int{}
	for i, f := range head.Manifest.GetFields() {
		at[f.GetId()] = i
		ls.Fields = append(ls.Fields, datafile.Field{Name: f.GetName(), ID: f.GetId(), ParentID: f.GetParentId(),
			LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()})
		if p, ok := at[f.GetParentId()]; ok && f.GetParentId() != f.GetId() {
			ls.Fields[p].Children = append(ls.Fields[p].Children, i)
		}
	}
	sch, err := ls.ArrowSchema()
	return sch, commit.DataFormatVersion(head.Manifest), err
}

// sortedLanceRows reads every row with Lance 12 in the peer's canonical
// encoding, as sorted strings (row addresses and ids ignored).
func sortedLanceRows(ctx context.Context, p *peerlance.Peer, dir string) ([]string, error) {
	r, err := p.Rows(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(r.Rows))
	for i := range r.Rows {
		row, err := r.CanonicalRow(i)
		if err != nil {
			return nil, err
		}
		out[i] = strings.Join(row, "\x1f")
	}
	slices.Sort(out)
	return out, nil
}

// TestWriteCLI_Issue12_AppendToEveryCorpusTableAsLance12Does.
func TestWriteCLI_Issue12_AppendToEveryCorpusTableAsLance12Does(t *testing.T) {
	p := peerlance.ServeForTest(t)
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	for ti, rel := range corpusTables(t, corpus) {
		t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			tmp := t.TempDir()
			src := filepath.Join(corpus, rel)
			theirs, ours, seeded := filepath.Join(tmp, "theirs.lance"), filepath.Join(tmp, "ours.lance"), filepath.Join(tmp, "seeded.lance")
			for _, d := range []string{theirs, ours, seeded} {
				if err := peerlance.CopyDir(src, d); err != nil {
					t.Fatal(err)
				}
			}
			sch, tableVersion, serr := headArrowSchema(ctx, t, ours)
			if serr != nil {
				// our library cannot state the table's schema: Lance must
				// not be able to append either, and neither may we.
				t.Logf("%s: no Arrow schema: %v", rel, serr)
				sch = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
			}
			rng := mrand.New(mrand.NewPCG(uint64(ti), 1212))
			b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
			structNulls := tableVersion != "2.0" && tableVersion != "0.1"
			for r := range 40 {
				for i, fl := range sch.Fields() {
					issue12Value(rng, b.Field(i), fl.Nullable, structNulls, int64(5_000_000+r))
				}
			}
			rec := b.NewRecordBatch()
			b.Release()
			defer rec.Release()
			in := filepath.Join(tmp, "in.arrow")
			if err := peerlance.WriteIPCFile(in, sch, rec); err != nil {
				t.Fatal(err)
			}

			_, lanceErr := p.Append(ctx, theirs, in)
			code, _, stderr := runCLI(t, "write", ours, "--from", in, "--mode", "append")
			// 2.3 included (spec 2.1 §2.5: 2.2's encodings, footer (2,3)):
			// storage_2_3 is appended to as Lance 12 does.
			writable := tableVersion == "2.0" || tableVersion == "2.1" || tableVersion == "2.2" || tableVersion == "2.3"
			t.Logf("%s (storage %s): Lance 12 append: %v; ours: exit %d %s", rel, tableVersion, lanceErr, code, strings.TrimSpace(stderr))
			var le *peerlance.LanceError
			switch {
			case lanceErr != nil && !errors.As(lanceErr, &le):
				t.Fatalf("peer failed: %v", lanceErr)
			case lanceErr != nil:
				if code == 0 {
					t.Fatalf("Lance 12 refuses to append (%v) but our append succeeded", lanceErr)
				}
				if !strings.Contains(stderr, "lancekeeper write:") {
					t.Fatalf("our refusal is not a clear error: %q", stderr)
				}
				return
			case !writable:
				// Lance 12 appends; this build does not write the version.
				if code != exitBadInput || !strings.Contains(stderr, commit.ErrStorageVersion.Error()) {
					t.Fatalf("storage %s: exit %d %q, want exit 2 naming %q", tableVersion, code, stderr, commit.ErrStorageVersion)
				}
				return
			case code != 0:
				t.Fatalf("Lance 12 appends to this %s table, our append fails: exit %d %s", tableVersion, code, stderr)
			}
			_, wantN, err := p.Count(ctx, theirs)
			if err != nil {
				t.Fatal(err)
			}
			if _, gotN, err := p.Count(ctx, ours); err != nil || gotN != wantN {
				t.Fatalf("Lance 12 counts %d rows after our append (%v), %d after its own", gotN, err, wantN)
			}
			want, werr := sortedLanceRows(ctx, p, theirs)
			got, gerr := sortedLanceRows(ctx, p, ours)
			verifyWant := 0
			switch {
			case werr != nil:
				// 0.29.0 index_without_created_at: upstream stored no data
				// files, so Lance cannot scan its own append either.
				var le *peerlance.LanceError
				if !errors.As(werr, &le) || gerr == nil {
					t.Fatalf("Lance 12 cannot scan the table after its own append (%v) but can after ours (%v)", werr, gerr)
				}
				t.Logf("Lance 12 scans neither copy: %v", werr)
				verifyWant = 4 // docs/cli.md seeds verify:: a data file unreadable
			case gerr != nil:
				t.Fatalf("Lance 12 cannot read the table after our append: %v", gerr)
			case !slices.Equal(got, want):
				t.Fatalf("Lance 12 reads %d rows after our append, %d after its own; first difference: %s", len(got), len(want), firstDiff(got, want))
			}
			if code, out, errs := runCLI(t, "seeds", "verify", ours); code != verifyWant {
				t.Fatalf("seeds verify after our append: exit %d, want %d\n%s%s", code, verifyWant, out, errs)
			}
			// with v1 seeds on every column
			if code, out, errs := runCLI(t, "write", seeded, "--from", in, "--mode", "append", "--seeds", "all", "--enable-zone-write-seeds", "--rows-per-zone", "16"); code != 0 {
				t.Fatalf("seeded append: exit %d\n%s%s", code, out, errs)
			}
			if code, out, errs := runCLI(t, "seeds", "verify", seeded); code != verifyWant {
				t.Fatalf("seeds verify after our seeded append: exit %d\n%s%s", code, out, errs)
			}
		})
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("ours %q, Lance's %q", a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}
