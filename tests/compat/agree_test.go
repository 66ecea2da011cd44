package compat_test

// Shared machinery of the two-sided suites: reading a version with our
// library alone (manifest + flags + inspect + datafile + deletion files) and
// checking that it agrees, version by version, with what real Lance 12
// reports through the peer.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// ourRows is a version's live rows as our library reads them, ascending by
// row address (fragment id << 32 | offset), values in the peer's canonical
// JSON encoding (peerlance.Value).
type ourRows struct {
	Columns []string
	Addrs   []uint64
	Rows    [][]string
	// NotDecodable says why the rows could not be read with our data-file
	// reader (a data file that is not Lance 2.0, or a 2.0 page our reader
	// does not decode); Rows is then nil.
	NotDecodable string
}

// errNotDecodable marks data files our reader does not decode (legacy v1
// files opened without the table schema, pages of a layout we refuse).
// Anything else that fails while scanning is a real error.
var errNotDecodable = errors.New("not decodable by our data-file reader")

// stores opens and caches the stores of base paths (shallow clones).
type stores struct {
	root  *store.Store
	bases map[string]*store.Store
}

func (s *stores) of(ctx context.Context, loc manifest.Location) (*store.Store, error) {
	if loc.Base == "" {
		return s.root, nil
	}
	if st, ok := s.bases[loc.Base]; ok {
		return st, nil
	}
	st, err := store.Open(ctx, loc.Base)
	if err != nil {
		return nil, fmt.Errorf("open base %s: %w", loc.Base, err)
	}
	s.bases[loc.Base] = st
	return st, nil
}

func (s *stores) close() {
	for _, st := range s.bases {
		st.Close()
	}
}

// topLevelFields returns the manifest's top-level fields in schema order.
func topLevelFields(m *pb.Manifest) []*pb.Field {
	var out []*pb.Field
	for _, f := range m.GetFields() {
		if f.GetParentId() < 0 {
			out = append(out, f)
		}
	}
	return out
}

// scanRows reads every live row of manifest m of the dataset rooted at root:
// each fragment's data files (by field id, honouring the tombstones in
// DataFile.fields), minus its deletion vector.
func scanRows(ctx context.Context, root *store.Store, m *pb.Manifest, manifestFile io.ReaderAt) (*ourRows, error) {
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	sts := &stores{root: root, bases: map[string]*store.Store{}}
	defer sts.close()
	top := topLevelFields(m)
	out := &ourRows{Rows: [][]string{}}
	for _, f := range top {
		out.Columns = append(out.Columns, f.GetName())
	}
	inTable := map[int32]bool{}
	for _, fl := range m.GetFields() {
		inTable[fl.GetId()] = true
	}
	frags := slices.Clone(m.GetFragments())
	slices.SortFunc(frags, func(a, b *pb.DataFragment) int { return compareU64(a.GetId(), b.GetId()) })
	for _, frag := range frags {
		cols := map[int32]arrowColumn{} // field id -> column
		var physical uint64
		for i, df := range frag.GetFiles() {
			loc, err := res.DataFile(df)
			if err != nil {
				return nil, err
			}
			st, err := sts.of(ctx, loc)
			if err != nil {
				return nil, err
			}
			f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(loc.Path), datafile.OpenOptions{Size: int64(df.GetFileSizeBytes()),
				LegacyFields: m.GetFields(), LegacyFieldIDs: df.GetFields(), LegacyManifest: manifestFile})
			if errors.Is(err, datafile.ErrLegacyFormat) {
				return nil, fmt.Errorf("%w: fragment %d: %v", errNotDecodable, frag.GetId(), err)
			}
			if err != nil {
				return nil, fmt.Errorf("fragment %d: %w", frag.GetId(), err)
			}
			if i == 0 {
				physical = f.NumRows()
			} else if f.NumRows() != physical {
				return nil, fmt.Errorf("fragment %d: data file %s has %d rows, the first one %d", frag.GetId(), df.GetPath(), f.NumRows(), physical)
			}
			if pr := frag.GetPhysicalRows(); pr != 0 && pr != physical {
				return nil, fmt.Errorf("fragment %d: physical_rows %d but its data file has %d rows", frag.GetId(), pr, physical)
			}
			rec, err := f.ReadColumns(ctx, datafile.ReadOptions{})
			if errors.Is(err, datafile.ErrUnsupported) {
				return nil, fmt.Errorf("%w: %v", errNotDecodable, err)
			}
			if err != nil {
				return nil, fmt.Errorf("fragment %d: %w", frag.GetId(), err)
			}
			defer rec.Release()
			live := map[int32]bool{}
			for _, id := range df.GetFields() {
				live[id] = true
			}
			// 2.0 files list every field, 2.1+ files only the leaves
			// (lance-file-format-2.1.md §8.3): a top-level field is stored
			// when it or a field below it is listed.
			var stored func(fi int) bool
			stored = func(fi int) bool {
				fl := &f.Schema().Fields[fi]
				if live[fl.ID] {
					return true
				}
				if f.Version() == datafile.V2_0 {
					return false
				}
				for _, c := range fl.Children {
					if stored(c) {
						return true
					}
				}
				return false
			}
			for j, fi := range f.Schema().TopLevel() {
				if !stored(fi) || !inTable[f.Schema().Fields[fi].ID] {
					continue
				}
				if _, dup := cols[f.Schema().Fields[fi].ID]; dup {
					continue // a field id in two data files (corrupt schemas): the first file wins, as in Lance
				}
				// Nested renames and drops: the table's view, by field id.
				a, err := f.ConformArray(fi, rec.Column(j), m.GetFields())
				if err != nil {
					return nil, fmt.Errorf("fragment %d: %w", frag.GetId(), err)
				}
				defer a.Release()
				cols[f.Schema().Fields[fi].ID] = arrowColumn{arr: a}
			}
		}
		deleted := roaring.New()
		if del := frag.GetDeletionFile(); del != nil {
			loc, err := res.DeletionFile(frag.GetId(), del)
			if err != nil {
				return nil, err
			}
			st, err := sts.of(ctx, loc)
			if err != nil {
				return nil, err
			}
			if deleted, err = manifest.ReadDeletionFile(ctx, st.Bucket(), st.BucketKey(loc.Path), del.GetFileType()); err != nil {
				return nil, err
			}
			if n := del.GetNumDeletedRows(); n != 0 && n != deleted.GetCardinality() {
				return nil, fmt.Errorf("fragment %d: deletion file lists %d rows, the manifest says %d", frag.GetId(), deleted.GetCardinality(), n)
			}
		}
		for off := uint64(0); off < physical; off++ {
			if deleted.Contains(uint32(off)) {
				continue
			}
			row := make([]string, len(top))
			for j, fl := range top {
				c, ok := cols[fl.GetId()]
				if !ok {
					row[j] = "null" // a field no data file of this fragment stores
					continue
				}
				v, err := peerlance.Value(c.arr, int(off))
				if err != nil {
					return nil, fmt.Errorf("fragment %d row %d column %s: %w", frag.GetId(), off, fl.GetName(), err)
				}
				row[j] = v
			}
			out.Addrs = append(out.Addrs, frag.GetId()<<32|off)
			out.Rows = append(out.Rows, row)
		}
	}
	return out, nil
}

type arrowColumn struct {
	arr arrow.Array
}

func compareU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readOurRows opens version v (0 = latest) with snapshot (flag checks
// included) and scans its rows.
func readOurRows(ctx context.Context, dir string, v uint64) (*ourRows, *pb.Manifest, error) {
	return readOurRowsAt(ctx, dir, snapshot.Ref{Version: v})
}

// readOurRowsAt is readOurRows of any ref (a branch's version, say).
func readOurRowsAt(ctx context.Context, dir string, ref snapshot.Ref) (*ourRows, *pb.Manifest, error) {
	s, err := snapshot.Open(ctx, dir, snapshot.Options{Ref: ref})
	if err != nil {
		return nil, nil, err
	}
	defer s.Dataset.Close()
	// Legacy v1 dictionaries live in the manifest file.
	var mf io.ReaderAt
	if s.Branch == "" {
		st := s.Dataset.Store()
		if b, err := st.Bucket().ReadAll(ctx, st.BucketKey(s.Path)); err == nil {
			mf = bytes.NewReader(b)
		}
	}
	// A branch's own files lie under its root (tree/NAME); inherited ones
	// are reached through base paths.
	root, err := s.Dataset.BranchStore(s.Branch)
	if err != nil {
		return nil, nil, err
	}
	rows, err := scanRows(ctx, root, s.Manifest(), mf)
	if errors.Is(err, errNotDecodable) {
		return &ourRows{NotDecodable: err.Error()}, s.Manifest(), nil
	}
	return rows, s.Manifest(), err
}

// lanceRowsCanonical returns Lance's rows of a version in ascending row
// address order (the driver's --order rowaddr) in the same shape as ourRows.
func lanceRowsCanonical(ctx context.Context, p *peerlance.Peer, dir string, opts ...peerlance.ReadOption) (*ourRows, *peerlance.Rows, error) {
	r, err := p.Rows(ctx, dir, append(slices.Clone(opts), peerlance.OrderByRowAddr())...)
	if err != nil {
		return nil, nil, err
	}
	if len(r.RowAddrs) != len(r.Rows) {
		return nil, nil, fmt.Errorf("Lance returned %d rows but %d row addresses", len(r.Rows), len(r.RowAddrs))
	}
	out := &ourRows{Columns: r.Columns, Rows: make([][]string, len(r.Rows)), Addrs: make([]uint64, len(r.Rows))}
	for i := range r.Rows {
		if out.Addrs[i], err = r.RowAddr(i); err != nil {
			return nil, nil, err
		}
		if i > 0 && out.Addrs[i] <= out.Addrs[i-1] {
			return nil, nil, fmt.Errorf("Lance rows ordered by row address: row %d has address %d after %d", i, out.Addrs[i], out.Addrs[i-1])
		}
		if out.Rows[i], err = r.CanonicalRow(i); err != nil {
			return nil, nil, err
		}
	}
	return out, r, nil
}

// diffRows returns "" when a and b hold the same columns, row addresses and
// values, else a description of the first differences.
func diffRows(aName string, a *ourRows, bName string, b *ourRows) string {
	var out []string
	if !slices.Equal(a.Columns, b.Columns) {
		return fmt.Sprintf("columns: %s %v, %s %v", aName, a.Columns, bName, b.Columns)
	}
	if len(a.Rows) != len(b.Rows) {
		out = append(out, fmt.Sprintf("%s has %d rows, %s %d", aName, len(a.Rows), bName, len(b.Rows)))
	}
	for i := 0; i < min(len(a.Rows), len(b.Rows)) && len(out) < 6; i++ {
		if a.Addrs[i] != b.Addrs[i] {
			out = append(out, fmt.Sprintf("row %d: address %s %d/%d, %s %d/%d", i, aName, a.Addrs[i]>>32, a.Addrs[i]&0xffffffff, bName, b.Addrs[i]>>32, b.Addrs[i]&0xffffffff))
			continue
		}
		for j := range a.Columns {
			if a.Rows[i][j] != b.Rows[i][j] {
				out = append(out, fmt.Sprintf("row %d (fragment %d offset %d) column %s: %s %s, %s %s", i, a.Addrs[i]>>32, a.Addrs[i]&0xffffffff, a.Columns[j], aName, a.Rows[i][j], bName, b.Rows[i][j]))
			}
		}
	}
	return strings.Join(out, "\n")
}

// expectedFlags derives the flag words a manifest must carry from its
// content (lance-table-format.md §6.2): deletion files, stable row ids,
// table config, base paths and covering fields are derived; the sticky
// paired bits are whatever the manifest carries in both words. Bits 2
// (deprecated v2 format) and 5 (per-commit "no transaction file") are left
// out of the comparison (flagMask).
func expectedFlags(m *pb.Manifest) (reader, writer uint64) {
	c := flags.Content{Config: len(m.GetConfig()) > 0, BasePaths: len(m.GetBasePaths()) > 0}
	for _, f := range m.GetFragments() {
		c.DeletionFiles = c.DeletionFiles || f.GetDeletionFile() != nil
		c.StableRowIDs = c.StableRowIDs || f.GetRowIdSequence() != nil
	}
	if len(m.GetFragments()) == 0 && m.GetReaderFeatureFlags()&flags.StableRowIDs != 0 {
		c.StableRowIDs = true // an empty table keeps its row-id mode
	}
	r, w := flags.Derive(c)
	sticky := m.GetReaderFeatureFlags() & m.GetWriterFeatureFlags() & flags.Sticky
	return (r | sticky) & flagMask, (w | sticky) & flagMask
}

const flagMask = ^(flags.UseV2FormatDeprecated | flags.DisableTransactionFile)

// agreement counts what agreeOnDataset compared.
type agreement struct {
	versions, rowVersions, rows int
	notDecodable                []uint64
}

// agreeOnDataset checks that our library and Lance 12 agree on every
// version of the dataset at dir: the version list and timestamps, the tags
// (names, versions, manifest sizes), and per version the live row count,
// the schema (names, Arrow types, nullability), the index names, the tags
// pointing at it, flag words that follow from the manifest's content (and
// that both sides open the version), and — where every data file is Lance
// 2.0 — the rows: the same row addresses and bit-identical values.
func agreeOnDataset(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string) agreement {
	t.Helper()
	var ag agreement
	info, err := p.Info(ctx, dir)
	if err != nil {
		t.Fatalf("Lance info: %v", err)
	}
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	vs, err := inspect.Versions(ctx, d, "")
	if err != nil {
		t.Fatalf("our version list: %v", err)
	}
	var ours, theirs []uint64
	for _, v := range vs {
		ours = append(ours, v.Version)
	}
	for _, v := range info.Versions {
		theirs = append(theirs, v.Version)
	}
	if !slices.Equal(ours, theirs) {
		t.Fatalf("versions: ours %v, Lance %v", ours, theirs)
	}
	if vs[len(vs)-1].Version != info.LatestVersion {
		t.Errorf("latest: ours %d, Lance %d", vs[len(vs)-1].Version, info.LatestVersion)
	}
	if (vs[len(vs)-1].NamingScheme == "V2") != info.UsesV2ManifestPaths {
		t.Errorf("naming: ours %s, Lance uses_v2_manifest_paths=%v", vs[len(vs)-1].NamingScheme, info.UsesV2ManifestPaths)
	}
	tags, err := d.ListTags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != len(info.Tags) {
		t.Errorf("tags: ours %d, Lance %v", len(tags), info.Tags)
	}
	for _, tg := range tags {
		l, ok := info.Tags[tg.Name]
		if !ok || l.Version != tg.Version || uint64(l.ManifestSize) != tg.ManifestSize {
			t.Errorf("tag %s: ours v%d size %d, Lance %+v (listed %v)", tg.Name, tg.Version, tg.ManifestSize, l, ok)
		}
	}
	for i, lv := range info.Versions {
		ag.versions++
		v := lv.Version
		if ts, err := time.Parse(time.RFC3339Nano, vs[i].Timestamp); err != nil || ts.UnixMicro() != lv.TimestampUS {
			t.Errorf("version %d: timestamp ours %q, Lance %d µs", v, vs[i].Timestamp, lv.TimestampUS)
		}
		s, err := inspect.Summarize(ctx, d, inspect.Options{Version: v})
		if err != nil {
			t.Errorf("version %d: our summary: %v", v, err)
			continue
		}
		checkSummary(t, s, lv)
		rows, m, err := readOurRows(ctx, dir, v)
		if err != nil {
			t.Errorf("version %d: our read: %v", v, err)
			continue
		}
		checkLanceTotals(t, v, m, s, lv.Metadata)
		if r, w := expectedFlags(m); m.GetReaderFeatureFlags()&flagMask != r || m.GetWriterFeatureFlags()&flagMask != w {
			t.Errorf("version %d: flags %d/%d, content implies %d/%d", v, m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), r, w)
		}
		if rows.NotDecodable != "" {
			ag.notDecodable = append(ag.notDecodable, v)
			continue
		}
		lr, lraw, err := lanceRowsCanonical(ctx, p, dir, peerlance.AtVersion(v))
		if err != nil {
			t.Errorf("version %d: Lance rows: %v", v, err)
			continue
		}
		if lraw.Version != v {
			t.Errorf("Lance rows at version %d read version %d", v, lraw.Version)
		}
		if d := diffRows("ours", rows, "Lance", lr); d != "" {
			t.Errorf("version %d rows differ:\n%s", v, d)
		}
		ag.rowVersions++
		ag.rows += len(rows.Rows)
	}
	return ag
}

// checkLanceTotals compares the summary Lance's listVersions reports for a
// version (total_rows, total_fragments, …; computed by Lance from the
// manifest) with what our summary and the manifest say.
func checkLanceTotals(t *testing.T, v uint64, m *pb.Manifest, s *inspect.Summary, meta map[string]string) {
	t.Helper()
	var size, delFiles uint64
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			size += df.GetFileSizeBytes()
		}
		if f.GetDeletionFile() != nil {
			delFiles++
		}
	}
	ours := map[string]string{
		"total_fragments":      itoa(uint64(s.NumFragments)),
		"total_data_files":     itoa(uint64(s.NumDataFiles)),
		"total_deletion_files": itoa(delFiles),
		"total_files_size":     itoa(size),
		"total_data_file_rows": itoa(s.PhysicalRows),
	}
	if s.NumRows != nil && s.DeletedRows != nil {
		ours["total_rows"] = itoa(*s.NumRows)
		ours["total_deletion_file_rows"] = itoa(*s.DeletedRows)
	}
	for k, want := range ours {
		if got, ok := meta[k]; !ok || got != want {
			t.Errorf("version %d: Lance's %s = %q (listed %v), ours %s", v, k, got, ok, want)
		}
	}
}

// checkSummary compares our summary of one version with Lance's report.
func checkSummary(t *testing.T, s *inspect.Summary, lv peerlance.VersionInfo) {
	t.Helper()
	v := lv.Version
	if s.ReadRefused != "" {
		t.Errorf("version %d: we refuse to read it (%s) but Lance reads it", v, s.ReadRefused)
	}
	switch {
	case lv.RowCount == nil && s.NumRows != nil:
		t.Errorf("version %d: we count %d rows, Lance could not: %s", v, *s.NumRows, lv.RowCountError)
	case lv.RowCount == nil:
		// Neither side can count (the corpus' 0.5.9 dataset stores no data files).
	case s.NumRows == nil:
		t.Errorf("version %d: we could not count rows (%s), Lance counts %d", v, s.NumRowsError, *lv.RowCount)
	case int64(*s.NumRows) != *lv.RowCount:
		t.Errorf("version %d: %d live rows, Lance counts %d", v, *s.NumRows, *lv.RowCount)
	}
	if lv.NumFragments != nil && int64(s.NumFragments) != *lv.NumFragments {
		t.Errorf("version %d: %d fragments, Lance %d", v, s.NumFragments, *lv.NumFragments)
	}
	if lv.Schema == nil {
		t.Errorf("version %d: Lance has no schema: %s", v, lv.SchemaError)
	} else {
		var top []inspect.Field
		for _, f := range s.Fields {
			if f.ParentID < 0 {
				top = append(top, f)
			}
		}
		var ours, theirs []string
		for _, f := range top {
			ours = append(ours, fmt.Sprintf("%s %s nullable=%v", f.Name, f.ArrowType, f.Nullable))
		}
		for _, f := range lv.Schema.Fields {
			theirs = append(theirs, fmt.Sprintf("%s %s nullable=%v", f.Name, f.Type, f.Nullable))
		}
		if !slices.Equal(ours, theirs) {
			t.Errorf("version %d schema:\n  ours  %v\n  Lance %v", v, ours, theirs)
		}
	}
	// Every index Lance 12 lists we list, on the same columns. We list
	// more only where Lance 12 hides an index: system indices, the zone
	// maps declared for seeds, and detail-less legacy indices it cannot
	// type (corpus README).
	lance := map[string]string{}
	for _, ix := range lv.Indices {
		lance[ix.Name] = strings.Join(ix.Columns, ",")
	}
	ours := map[string]string{}
	for _, ix := range s.Indices {
		ours[ix.Name] = strings.Join(ix.Fields, ",")
		if _, listed := lance[ix.Name]; !listed && !ix.System && ix.Type != "ZoneMap" && ix.Type != "Unknown" {
			t.Errorf("version %d: we list index %s (%s on %v), Lance does not", v, ix.Name, ix.Type, ix.Fields)
		}
	}
	for name, cols := range lance {
		if got, ok := ours[name]; !ok || got != cols {
			t.Errorf("version %d: Lance lists index %s on %s; ours: %q (listed %v)", v, name, cols, got, ok)
		}
	}
	ot, lt := slices.Clone(s.Tags), slices.Clone(lv.Tags)
	slices.Sort(ot)
	slices.Sort(lt)
	if !slices.Equal(ot, lt) {
		t.Errorf("version %d tags: ours %v, Lance %v", v, ot, lt)
	}
}

// localStore opens the dataset directory as a store.
func localStore(ctx context.Context, t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// latestManifest reads the latest manifest of the dataset at dir.
func latestManifest(ctx context.Context, t *testing.T, dir string) (*manifest.File, manifest.VersionInfo) {
	t.Helper()
	st := localStore(ctx, t, dir)
	f, info, err := manifest.LoadLatest(ctx, st.Bucket(), strings.TrimSuffix(st.KeyPrefix(), "/"))
	if err != nil {
		t.Fatal(err)
	}
	return f, info
}

// writeNextManifest writes m (its version set to after's version + 1) as
// the next manifest file of the dataset at dir, with our encoder, in the
// naming scheme of after, and returns the new version.
func writeNextManifest(ctx context.Context, t *testing.T, dir string, after manifest.VersionInfo, m *pb.Manifest, idx *pb.IndexSection) uint64 {
	t.Helper()
	st := localStore(ctx, t, dir)
	v := after.Version + 1
	m.Version = v
	data, err := manifest.Encode(m, idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := manifest.ManifestPath(after.Scheme, v)
	if err := st.CreateIfAbsent(ctx, key, data); err != nil {
		t.Fatalf("writing manifest version %d: %v", v, err)
	}
	return v
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
