package compat_test

// Interleaving (issue 4 §2): 20 rounds of alternating commits by real Lance
// 12 and by us on one dataset — appends, deletes (and Lance updates) and
// tag changes drawn from a seeded generator — after which both sides agree
// on every version: the version list, row counts, flags, tags and rows (bit
// for bit, at the same row addresses), and both match the test's own model
// of every version.

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// idModel is the content of one version: canonical rows by id.
type idModel map[int64][]string

func (m idModel) clone() idModel {
	c := make(idModel, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// interleaver drives one dataset from both sides.
type interleaver struct {
	t      *testing.T
	ctx    context.Context
	p      *peerlance.Peer
	rng    *mrand.Rand
	dir    string
	st     *store.Store
	ds     *snapshot.Dataset
	nextID int64
	cur    idModel
	states map[uint64]idModel // every version's content
	tags   map[string]uint64
	tagSeq int
	log    []string
}

func (it *interleaver) latest() uint64 {
	_, info := latestManifest(it.ctx, it.t, it.dir)
	return info.Version
}

// committed records the model for every version from..latest.
func (it *interleaver) committed(who, what string, before uint64) {
	it.t.Helper()
	v := it.latest()
	for x := before + 1; x <= v; x++ {
		it.states[x] = it.cur.clone()
	}
	it.log = append(it.log, fmt.Sprintf("%s v%d->v%d %s", who, before, v, what))
}

func (it *interleaver) batch(n int, vectorNaN bool) ([][]string, arrow.RecordBatch) {
	rec := trickyBatch(it.rng, it.nextID, n, vectorNaN)
	it.nextID += int64(n) + int64(it.rng.IntN(5))
	return canonicalRows(it.t, rec), rec
}

func (it *interleaver) randomTagVersion() uint64 {
	v := it.latest()
	return 1 + it.rng.Uint64N(v)
}

func (it *interleaver) tagNames() []string {
	var names []string
	for n := range it.tags {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// lanceStep makes one Lance 12 change.
func (it *interleaver) lanceStep() {
	t, ctx := it.t, it.ctx
	before := it.latest()
	switch k := it.rng.IntN(10); {
	case k < 4: // append
		rows, b := it.batch(1+it.rng.IntN(30), false)
		defer b.Release()
		file := filepath.Join(t.TempDir(), "lance.arrow")
		if err := peerlance.WriteIPCFile(file, b.Schema(), b); err != nil {
			t.Fatal(err)
		}
		if _, err := it.p.Append(ctx, it.dir, file); err != nil {
			t.Fatalf("Lance append: %v", err)
		}
		for _, r := range rows {
			it.cur[canonicalInt(r[0])] = r
		}
		it.committed("lance", fmt.Sprintf("append %d rows", len(rows)), before)
	case k < 6: // delete
		m, r := int64(3+it.rng.IntN(5)), int64(it.rng.IntN(3))
		if _, err := it.p.Delete(ctx, it.dir, fmt.Sprintf("id %% %d = %d", m, r)); err != nil {
			t.Fatalf("Lance delete: %v", err)
		}
		for id := range it.cur {
			if id%m == r {
				delete(it.cur, id)
			}
		}
		it.committed("lance", fmt.Sprintf("delete id %% %d = %d", m, r), before)
	case k < 8: // update: Lance rewrites the matching rows into a new fragment
		lo := it.rng.Int64N(max(it.nextID, 1))
		val := int16(it.rng.IntN(2000) - 1000)
		pred := fmt.Sprintf("id >= %d AND id < %d", lo, lo+15)
		if _, err := it.p.Update(ctx, it.dir, pred, peerlance.Assignment{Column: "i16", SQL: strconv.Itoa(int(val))}); err != nil {
			t.Fatalf("Lance update: %v", err)
		}
		col := trickySchema().FieldIndices("i16")[0]
		for id, row := range it.cur {
			if id >= lo && id < lo+15 {
				row = slices.Clone(row)
				row[col] = strconv.Itoa(int(val))
				it.cur[id] = row
			}
		}
		it.committed("lance", "update i16 where "+pred, before)
	default: // tags
		names := it.tagNames()
		switch {
		case len(names) == 0 || it.rng.IntN(2) == 0:
			it.tagSeq++
			name, v := fmt.Sprintf("lance%d", it.tagSeq), it.randomTagVersion()
			if err := it.p.TagCreate(ctx, it.dir, name, v); err != nil {
				t.Fatal(err)
			}
			it.tags[name] = v
		case it.rng.IntN(2) == 0:
			name, v := names[it.rng.IntN(len(names))], it.randomTagVersion()
			if err := it.p.TagUpdate(ctx, it.dir, name, v); err != nil {
				t.Fatal(err)
			}
			it.tags[name] = v
		default:
			name := names[it.rng.IntN(len(names))]
			if err := it.p.TagDelete(ctx, it.dir, name); err != nil {
				t.Fatal(err)
			}
			delete(it.tags, name)
		}
		it.log = append(it.log, fmt.Sprintf("lance tags -> %v", it.tags))
	}
}

// ourStep makes one change with our library.
func (it *interleaver) ourStep() {
	t, ctx := it.t, it.ctx
	before := it.latest()
	switch k := it.rng.IntN(10); {
	case k < 5: // append (vectors may hold NaN: Lance reads them)
		rows, b := it.batch(1+it.rng.IntN(30), true)
		defer b.Release()
		res, err := commit.WriteArrow(ctx, it.st, mustRecordReader(t, b), commit.WriteOptions{Mode: commit.ModeAppend, PageSize: 512})
		if err != nil {
			t.Fatalf("our append: %v", err)
		}
		for _, r := range rows {
			it.cur[canonicalInt(r[0])] = r
		}
		it.committed("ours", fmt.Sprintf("append %d rows -> fragments %v", len(rows), res.FragmentIDs), before)
	case k < 8: // delete by id pattern, through row addresses we read
		m, r := int64(2+it.rng.IntN(6)), int64(it.rng.IntN(2))
		rows, _, err := readOurRows(ctx, it.dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		del := map[uint64]*roaring.Bitmap{}
		for i, a := range rows.Addrs {
			if id := canonicalInt(rows.Rows[i][0]); id%m == r {
				if del[a>>32] == nil {
					del[a>>32] = roaring.New()
				}
				del[a>>32].Add(uint32(a))
				delete(it.cur, id)
			}
		}
		f, err := manifest.ReadVersion(ctx, it.st.Bucket(), strings.TrimSuffix(it.st.KeyPrefix(), "/"), before)
		if err != nil {
			t.Fatal(err)
		}
		txn, err := commit.NewDelete(ctx, it.st, f, del, fmt.Sprintf("id %% %d = %d", m, r))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := commit.Commit(ctx, it.st, txn, commit.Options{}); err != nil {
			t.Fatalf("our delete: %v", err)
		}
		it.committed("ours", fmt.Sprintf("delete id %% %d = %d", m, r), before)
	default: // tags
		names := it.tagNames()
		switch {
		case len(names) == 0 || it.rng.IntN(2) == 0:
			it.tagSeq++
			name, v := fmt.Sprintf("ours%d", it.tagSeq), it.randomTagVersion()
			if _, err := it.ds.CreateTag(ctx, name, snapshot.Ref{Version: v}, nil); err != nil {
				t.Fatal(err)
			}
			it.tags[name] = v
		case it.rng.IntN(2) == 0:
			name, v := names[it.rng.IntN(len(names))], it.randomTagVersion()
			if _, err := it.ds.UpdateTag(ctx, name, snapshot.Ref{Version: v}); err != nil {
				t.Fatal(err)
			}
			it.tags[name] = v
		default:
			name := names[it.rng.IntN(len(names))]
			if err := it.ds.DeleteTag(ctx, name); err != nil {
				t.Fatal(err)
			}
			delete(it.tags, name)
		}
		it.log = append(it.log, fmt.Sprintf("ours tags -> %v", it.tags))
	}
}

// checkHead compares both sides' view of the latest version with the model.
func (it *interleaver) checkHead(round int) {
	t, ctx := it.t, it.ctx
	t.Helper()
	v, n, err := it.p.Count(ctx, it.dir)
	if err != nil {
		t.Fatalf("round %d: Lance count: %v", round, err)
	}
	s, err := inspect.Summarize(ctx, it.ds, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != v || s.NumRows == nil || int64(*s.NumRows) != n || n != int64(len(it.cur)) {
		t.Fatalf("round %d: Lance at version %d counts %d rows; we see version %d with %v rows; the model has %d", round, v, n, s.Version, s.NumRows, len(it.cur))
	}
}

func TestInterleaving_TwentyRounds(t *testing.T) {
	p := peerlance.ServeForTest(t)
	// Who creates the dataset and how: our create, or Lance's (storage
	// 2.0), with V1 manifest names or stable row ids, which our commits
	// must then keep.
	cases := []struct {
		seed   uint64
		ours   bool
		create peerlance.CreateOptions
		short  bool
	}{
		{seed: 1, create: peerlance.CreateOptions{StorageVersion: "2.0"}, short: true},
		{seed: 2, ours: true, short: true},
		{seed: 3, create: peerlance.CreateOptions{StorageVersion: "2.0", V1Paths: true}},
		{seed: 4, create: peerlance.CreateOptions{StorageVersion: "2.0", StableRowIDs: true}},
	}
	for _, tc := range cases {
		seed := tc.seed
		name := fmt.Sprintf("seed%d_lance_create", seed)
		switch {
		case tc.ours:
			name = fmt.Sprintf("seed%d_our_create", seed)
		case tc.create.V1Paths:
			name += "_v1_paths"
		case tc.create.StableRowIDs:
			name += "_stable_row_ids"
		}
		t.Run(name, func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("-short: fewer cases")
			}
			record(t, catInterleaving)
			ctx := peerContext(t)
			dir := filepath.Join(t.TempDir(), "both.lance")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			it := &interleaver{t: t, ctx: ctx, p: p, rng: mrand.New(mrand.NewPCG(seed, 20)), dir: dir,
				st: localStore(ctx, t, dir), cur: idModel{}, states: map[uint64]idModel{}, tags: map[string]uint64{}}
			// Round 0: the first version.
			rows, b := it.batch(50, tc.ours)
			if tc.ours {
				if _, err := commit.WriteArrow(ctx, it.st, mustRecordReader(t, b), commit.WriteOptions{Mode: commit.ModeCreate, PageSize: 512}); err != nil {
					t.Fatal(err)
				}
			} else {
				file := filepath.Join(t.TempDir(), "create.arrow")
				if err := peerlance.WriteIPCFile(file, b.Schema(), b); err != nil {
					t.Fatal(err)
				}
				if _, err := p.Create(ctx, dir, file, tc.create); err != nil {
					t.Fatal(err)
				}
			}
			b.Release()
			for _, r := range rows {
				it.cur[canonicalInt(r[0])] = r
			}
			it.committed("create", "", 0)
			ds, err := snapshot.OpenDataset(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			it.ds = ds
			for round := 1; round <= 20; round++ {
				it.lanceStep()
				it.checkHead(round)
				it.ourStep()
				it.checkHead(round)
			}
			defer func() {
				if t.Failed() {
					for _, l := range it.log {
						t.Logf("  %s", l)
					}
				}
			}()
			// Our commits kept the dataset's naming and row-id mode.
			vs, err := inspect.Versions(ctx, ds, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if (v.NamingScheme == "V1") != tc.create.V1Paths {
					t.Errorf("version %d is named %s (%s)", v.Version, v.NamingScheme, v.ManifestPath)
				}
				if (v.ReaderFlags&flags.StableRowIDs != 0) != tc.create.StableRowIDs {
					t.Errorf("version %d: reader flags %d, stable row ids %v", v.Version, v.ReaderFlags, tc.create.StableRowIDs)
				}
			}
			// Both sides agree on every version...
			ag := agreeOnDataset(ctx, t, p, dir)
			if len(ag.notDecodable) > 0 {
				t.Errorf("versions %v not decodable by us", ag.notDecodable)
			}
			// ...and on the tags the model expects...
			tags, err := p.Tags(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(tags) != len(it.tags) {
				t.Errorf("Lance lists tags %v, model %v", tags, it.tags)
			}
			for name, v := range it.tags {
				if tags[name].Version != v {
					t.Errorf("tag %s: Lance %d, model %d", name, tags[name].Version, v)
				}
			}
			// ...and every version holds what the model says.
			for v := uint64(1); v <= it.latest(); v++ {
				rows, _, err := readOurRows(ctx, dir, v)
				if err != nil {
					t.Fatal(err)
				}
				want := it.states[v]
				if len(rows.Rows) != len(want) {
					t.Errorf("version %d: %d rows, model %d", v, len(rows.Rows), len(want))
					continue
				}
				for _, r := range rows.Rows {
					if w, ok := want[canonicalInt(r[0])]; !ok || !slices.Equal(r, w) {
						t.Errorf("version %d id %s: ours %v, model %v", v, r[0], r, w)
						break
					}
				}
			}
			kinds := map[string]int{}
			for _, l := range it.log {
				f := strings.Fields(l)
				k := f[0] + " " + f[1]
				if len(f) > 2 && f[1] != "tags" {
					k = f[0] + " " + f[2]
				}
				kinds[k]++
			}
			t.Logf("seed %d: steps %v; %d versions agree (rows of %d versions, %d rows, identical), %d tags", seed, kinds, ag.versions, ag.rowVersions, ag.rows, len(it.tags))
		})
	}
}
