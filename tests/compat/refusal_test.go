package compat_test

// Refusal (issue 4 §2; zone-seeds.md R53–R59): once we commit v1 seeds —
// through the explicit activation (`lancekeeper seeds enable`) or through a
// write with seeds — the manifest carries FLAG_ZONE_WRITE_SEEDS (bit 16) in
// both words and real Lance 12 refuses to read and to write the dataset with
// its unsupported-flags message. A manifest with only one of the two bits is
// corrupt for us (flags.ErrHalfSet); what Lance 12 does with it is recorded
// here and in docs/compat.md.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// Lance 12's refusal messages (lance-table-format.md §6.6), as observed.
func lanceReadRefusal(readerFlags uint64) string {
	return fmt.Sprintf("This dataset cannot be read by this version of Lance. Please upgrade Lance to read this dataset. Flags: %d", readerFlags)
}

// lanceWriteRefusalAppend is the append/insert path's message: a newline
// and a space before "Flags".
func lanceWriteRefusalAppend(writerFlags uint64) string {
	return fmt.Sprintf("This dataset cannot be written by this version of Lance. Please upgrade Lance to write to this dataset.\n Flags: %d", writerFlags)
}

// lanceWriteRefusalManifest is the manifest-level write check's message
// (delete, update, …).
func lanceWriteRefusalManifest(writerFlags uint64) string {
	return fmt.Sprintf("This dataset cannot be written by this version of Lance. Please upgrade Lance to write this dataset. Flags: %d", writerFlags)
}

// expectLanceRefusal runs a driver command and requires Lance to refuse it
// in op with a message whose innermost cause is exactly want (or, with
// contains, a message containing want).
func expectLanceRefusal(ctx context.Context, t *testing.T, p *peerlance.Peer, op, want string, contains bool, args ...string) {
	t.Helper()
	out, err := p.Run(ctx, args...)
	var le *peerlance.LanceError
	if !errors.As(err, &le) {
		t.Errorf("Lance 12 %v: got %.200s, %v; want its refusal %q", args, out, err, want)
		return
	}
	ok := strings.HasSuffix(le.Message, want)
	if contains {
		ok = strings.Contains(le.Message, want)
	}
	if !ok || le.Op != op {
		t.Errorf("Lance 12 %v refused in %s with:\n%s\nwant op %s and the message %q", args, le.Op, le.Message, op, want)
	}
}

// expectLanceOK runs a driver command and requires Lance to accept it.
func expectLanceOK(ctx context.Context, t *testing.T, p *peerlance.Peer, args ...string) {
	t.Helper()
	if _, err := p.Run(ctx, args...); err != nil {
		t.Errorf("Lance 12 %v: %v", args, err)
	}
}

// refusalDataset builds a dataset with history written by both sides:
// v1 our create, v2 our delete, v3 Lance's append; tag "pre" -> v2.
// It returns the directory, our model of v3 and an IPC file Lance can append.
func refusalDataset(ctx context.Context, t *testing.T, p *peerlance.Peer, seed uint64) (dir string, model modelRows, ipcFile string) {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(seed, 16))
	dir = filepath.Join(t.TempDir(), "flagged.lance")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st := localStore(ctx, t, dir)
	model = modelRows{}
	rec := trickyBatch(rng, 0, 300, true)
	defer rec.Release()
	writeOurs(ctx, t, st, rec, commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 200}, model)
	deleteOurs(ctx, t, st, model, func(id int64) bool { return id%4 == 1 }, "id % 4 = 1")
	if err := p.TagCreate(ctx, dir, "pre", 2); err != nil {
		t.Fatal(err)
	}
	more := trickyBatch(rng, 1000, 40, false)
	defer more.Release()
	if v := lanceAppend(ctx, t, p, dir, more, model); v != 3 {
		t.Fatalf("Lance's append made version %d, want 3", v)
	}
	extra := trickyBatch(rng, 2000, 5, false)
	defer extra.Release()
	ipcFile = filepath.Join(t.TempDir(), "extra.arrow")
	if err := peerlance.WriteIPCFile(ipcFile, extra.Schema(), extra); err != nil {
		t.Fatal(err)
	}
	return dir, model, ipcFile
}

// TestRefusal_R55_Lance12RefusesAfterActivation activates v1 seeds on a
// dataset (R56: explicitly, or by a write with seeds and the opt-in) and
// checks what Lance 12 does with every version.
func TestRefusal_R55_Lance12RefusesAfterActivation(t *testing.T) {
	p := peerlance.ServeForTest(t)
	for _, name := range []string{"seeds_enable", "write_with_seeds"} {
		t.Run(name, func(t *testing.T) {
			record(t, catRefusal)
			ctx := peerContext(t)
			dir, model, ipcFile := refusalDataset(ctx, t, p, uint64(len(name)))
			st := localStore(ctx, t, dir)
			pre, _, err := lanceRowsCanonical(ctx, p, dir, peerlance.AtVersion(3))
			if err != nil {
				t.Fatal(err)
			}
			if d := diffRows("Lance", pre, "model", model.rows(columnNames(trickySchema()))); d != "" {
				t.Fatalf("before activation:\n%s", d)
			}
			var res *commit.Result
			rng := mrand.New(mrand.NewPCG(99, 1))
			switch name {
			case "seeds_enable":
				r, already, err := commit.EnableZoneWriteSeeds(ctx, st, commit.Options{})
				if err != nil || already {
					t.Fatalf("seeds enable: %v (already %v)", err, already)
				}
				res = r
			default:
				rec := trickyBatch(rng, 5000, 100, true)
				defer rec.Release()
				// Without the opt-in our writer refuses (R56).
				rdr := mustRecordReader(t, rec)
				if _, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeAppend, SeedAllColumns: true}); !errors.Is(err, commit.ErrSeedsNotEnabled) {
					t.Fatalf("seeded append without the opt-in: %v, want ErrSeedsNotEnabled", err)
				}
				w := writeOurs(ctx, t, st, rec, commit.WriteOptions{Mode: commit.ModeAppend, SeedAllColumns: true, RowsPerZone: 16, Commit: commit.Options{EnableZoneWriteSeeds: true}}, modelRows{})
				res = w.Result
				// Our files carry v1 seeds, readable only as a flagged table (R61).
				df := openDataFileKey(ctx, t, st, w.Files[0].Path)
				for _, flagged := range []bool{true, false} {
					seeds, err := df.Seeds(ctx, seedio.DecodeOptions{TableFlagged: flagged})
					if err != nil || len(seeds) != len(trickySchema().Fields()) {
						t.Fatalf("seeds of our file: %d, %v", len(seeds), err)
					}
					for _, s := range seeds {
						switch {
						case flagged && (s.Err != nil || s.Seed.Version != 1):
							t.Errorf("seed %s in the flagged table: %v", s.Column, s.Err)
						case !flagged && !errors.Is(s.Err, seedio.ErrSeedV1WithoutFlag):
							t.Errorf("seed %s read as unflagged: %v, want E26", s.Column, s.Err)
						}
					}
				}
			}
			if res.Version != 4 {
				t.Fatalf("activation committed version %d, want 4", res.Version)
			}
			r, w := res.Manifest.GetReaderFeatureFlags(), res.Manifest.GetWriterFeatureFlags()
			if !flags.Has(r, w, flags.ZoneWriteSeeds) || flags.CheckPaired(r, w) != nil {
				t.Fatalf("after activation flags %d/%d", r, w)
			}
			before := treeDigest(t, dir)
			want := lanceReadRefusal(r)
			// Reads and writes of the head: refused when Lance opens the table.
			for _, args := range [][]string{
				{"count", dir}, {"rows", dir}, {"info", dir, "--brief"}, {"tags", dir},
				{"append", dir, "--ipc", ipcFile}, {"delete", dir, "--where", "id = 2"},
				{"update", dir, "--set", "i16=1"}, {"tag-create", dir, "post", "4"}, {"restore", dir, "3"},
				{"create-index", dir, "id", "--type", "btree"}, {"optimize", dir},
			} {
				expectLanceRefusal(ctx, t, p, "open", want, false, args...)
			}
			// Versions from before the activation, by version or tag:
			// lancedb opens the latest manifest before checking out, so
			// Lance 12 refuses them too (recorded in docs/compat.md).
			for _, args := range [][]string{
				{"count", dir, "--version", "3"}, {"rows", dir, "--version", "1"}, {"count", dir, "--tag", "pre"},
			} {
				expectLanceRefusal(ctx, t, p, "open", want, false, args...)
			}
			expectLanceRefusal(ctx, t, p, "cloneTable", want, false, "clone", dir, filepath.Join(t.TempDir(), "c.lance"), "--version", "3")
			if after := treeDigest(t, dir); !reflect.DeepEqual(before, after) {
				t.Errorf("Lance's refused commands changed the dataset (%d files before, %d after)", len(before), len(after))
			}
			// We still read every version, the old ones as Lance did.
			ours, _, err := readOurRows(ctx, dir, 3)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffRows("ours", ours, "Lance before activation", pre); d != "" {
				t.Errorf("version 3:\n%s", d)
			}
			// A way back for Lance 12: our clone of a pre-activation
			// version does not carry bit 16 (its parent never had it).
			for _, deep := range []bool{false, true} {
				c := filepath.Join(t.TempDir(), "back.lance")
				cr, err := snapshot.Clone(ctx, dir, c, snapshot.CloneOptions{Source: snapshot.Ref{Version: 3}, Deep: deep})
				if err != nil {
					t.Fatal(err)
				}
				if cr.Snapshot.Manifest().GetReaderFeatureFlags()&flags.ZoneWriteSeeds != 0 {
					t.Errorf("clone (deep %v) of pre-activation version 3 carries bit 16", deep)
				}
				got, _, err := lanceRowsCanonical(ctx, p, c)
				if err != nil {
					t.Fatalf("Lance on our clone (deep %v) of version 3: %v", deep, err)
				}
				if d := diffRows("Lance on the clone", got, "Lance before activation", pre); d != "" {
					t.Errorf("clone (deep %v):\n%s", deep, d)
				}
			}
		})
	}
}

func mustRecordReader(t *testing.T, rec arrow.RecordBatch) array.RecordReader {
	t.Helper()
	r, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Release)
	return r
}

// openDataFileKey opens a data file by its path relative to the store root.
func openDataFileKey(ctx context.Context, t *testing.T, st *store.Store, key string) *datafile.File {
	t.Helper()
	f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(key), datafile.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRefusal_R59_HalfSetBit16 writes a manifest with bit 16 in only one
// of the two words (with our encoder, as the next version): we refuse it as
// corrupt everywhere; Lance 12 refuses a reader-only bit at open, and with a
// writer-only bit reads the dataset but refuses appends and deletes.
func TestRefusal_R59_HalfSetBit16(t *testing.T) {
	p := peerlance.ServeForTest(t)
	for _, word := range []string{"reader", "writer"} {
		t.Run(word+"_only", func(t *testing.T) {
			record(t, catRefusal)
			ctx := peerContext(t)
			dir, model, ipcFile := refusalDataset(ctx, t, p, 7)
			f, info := latestManifest(ctx, t, dir)
			m := f.Manifest
			if word == "reader" {
				m.ReaderFeatureFlags |= flags.ZoneWriteSeeds
			} else {
				m.WriterFeatureFlags |= flags.ZoneWriteSeeds
			}
			r, w := m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()
			v := writeNextManifest(ctx, t, dir, info, m, f.IndexSection)
			// Ours: corrupt, on every path (R59).
			if _, err := snapshot.Open(ctx, dir, snapshot.Options{}); !errors.Is(err, flags.ErrHalfSet) {
				t.Errorf("snapshot.Open: %v, want ErrHalfSet", err)
			}
			if _, err := snapshot.Open(ctx, dir, snapshot.Options{Ref: snapshot.Ref{Version: v - 1}}); err != nil {
				t.Errorf("snapshot.Open of version %d (before): %v", v-1, err)
			}
			st := localStore(ctx, t, dir)
			rec := trickyBatch(mrand.New(mrand.NewPCG(1, 1)), 9000, 3, false)
			defer rec.Release()
			if _, err := commit.WriteArrow(ctx, st, mustRecordReader(t, rec), commit.WriteOptions{Mode: commit.ModeAppend}); !errors.Is(err, flags.ErrHalfSet) {
				t.Errorf("WriteArrow append: %v, want ErrHalfSet", err)
			}
			if _, _, err := commit.EnableZoneWriteSeeds(ctx, st, commit.Options{}); !errors.Is(err, flags.ErrHalfSet) {
				t.Errorf("seeds enable: %v, want ErrHalfSet", err)
			}
			d, err := snapshot.OpenDataset(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, _, err := d.Restore(ctx, snapshot.Ref{Version: 1}, snapshot.RestoreOptions{}); !errors.Is(err, flags.ErrHalfSet) {
				t.Errorf("restore: %v, want ErrHalfSet", err)
			}
			if s, err := inspect.Summarize(ctx, d, inspect.Options{SkipRowCount: true}); err != nil || s.ReadRefused == "" || s.WriteRefused == "" {
				t.Errorf("inspect: %v, read refused %q, write refused %q", err, s.ReadRefused, s.WriteRefused)
			}
			// Lance 12.
			if word == "reader" {
				want := lanceReadRefusal(r)
				for _, args := range [][]string{{"count", dir}, {"rows", dir}, {"count", dir, "--version", "1"}, {"append", dir, "--ipc", ipcFile}, {"delete", dir, "--where", "id = 2"}} {
					expectLanceRefusal(ctx, t, p, "open", want, false, args...)
				}
				return
			}
			// Writer-only: Lance reads every version, as before.
			got, _, err := lanceRowsCanonical(ctx, p, dir)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffRows("Lance", got, "model", model.rows(columnNames(trickySchema()))); d != "" {
				t.Errorf("writer-only half-set, Lance reads:\n%s", d)
			}
			expectLanceRefusal(ctx, t, p, "add", lanceWriteRefusalAppend(w), true, "append", dir, "--ipc", ipcFile)
			expectLanceRefusal(ctx, t, p, "delete", lanceWriteRefusalManifest(w), false, "delete", dir, "--where", "id = 2")
			expectLanceRefusal(ctx, t, p, "optimize", lanceWriteRefusalManifest(w), false, "optimize", dir)
			// Tags are not manifest commits: Lance creates one.
			expectLanceOK(ctx, t, p, "tag-create", dir, "lance-tag", strconv.FormatUint(v, 10))
			if latest, _ := latestManifest(ctx, t, dir); latest.Manifest.GetVersion() != v {
				t.Errorf("Lance committed version %d on the half-set dataset", latest.Manifest.GetVersion())
			}
		})
	}
}
