package commit

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// legacyDictDataset copies Lance 12's storage_legacy dataset (data_format
// 0.1; versions 1..3; field dict_utf8 = dictionary<int32, utf8> with the
// values red, green, blue kept in the manifest prelude) into a temp dir.
func legacyDictDataset(t testing.TB) (string, *store.Store) {
	t.Helper()
	dir := copyDir(t, "testdata/lance12_storage_legacy.lance")
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return dir, st
}

// legacyDictionary reads the string dictionary of field d from the manifest
// file bytes (legacy v1 layout: length+1 little-endian int64 offsets at
// d.offset, absolute file positions of the value bytes).
func legacyDictionary(data []byte, d *pb.Dictionary) ([]string, error) {
	n := d.GetLength()
	off := d.GetOffset()
	if n <= 0 || off < 0 || n > int64(len(data))/8 || off > int64(len(data))-(n+1)*8 {
		return nil, fmt.Errorf("dictionary offset %d length %d outside the %d-byte file", off, n, len(data))
	}
	pos := make([]int64, n+1)
	for i := range pos {
		pos[i] = int64(binary.LittleEndian.Uint64(data[off+int64(i)*8:]))
	}
	var out []string
	for i := range n {
		if pos[i] < 0 || pos[i] > pos[i+1] || pos[i+1] > int64(len(data)) {
			return nil, fmt.Errorf("dictionary value %d at [%d, %d) outside the %d-byte file", i, pos[i], pos[i+1], len(data))
		}
		out = append(out, string(data[pos[i]:pos[i+1]]))
	}
	return out, nil
}

// dictFields returns the fields with a legacy dictionary position.
func dictFields(m *pb.Manifest) map[int32]*pb.Dictionary {
	out := map[int32]*pb.Dictionary{}
	for _, f := range m.GetFields() {
		if f.GetDictionary().GetLength() > 0 {
			out[f.GetId()] = f.GetDictionary()
		}
	}
	return out
}

func readManifestBytes(t testing.TB, st *store.Store, path string) []byte {
	t.Helper()
	data, err := st.Get(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSpec3_6_LegacyDictionaryPreludeCarried: a legacy-storage table keeps
// its dictionary values in the manifest file before the first section, and
// Field.dictionary holds absolute file offsets into them (§3.6). A commit
// that keeps such a field writes the parent's prelude verbatim at offset 0,
// so every offset still finds the same values; a commit whose schema no
// longer has the field writes no prelude.
func TestSpec3_6_LegacyDictionaryPreludeCarried(t *testing.T) {
	ctx := context.Background()
	_, st := legacyDictDataset(t)
	head := readVersion(t, st, 3)
	if len(head.Prelude) == 0 || len(dictFields(head.Manifest)) == 0 {
		t.Fatal("corpus changed: storage_legacy v3 has no dictionary prelude")
	}
	want := []string{"red", "green", "blue"}
	for id, d := range dictFields(head.Manifest) {
		got, err := legacyDictionary(readManifestBytes(t, st, manifest.ManifestPath(manifest.V2, 3)), d)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("corpus v3 field %d: dictionary %q, %v; want %q", id, got, err, want)
		}
	}
	for _, tc := range []struct {
		name string
		txn  func(read uint64) *Transaction
		from uint64 // version whose prelude and dictionaries the new one keeps
	}{
		{"UpdateConfig", func(r uint64) *Transaction {
			return NewUpdateConfig(r, UpdateConfigSpec{Config: []ConfigChange{{Key: "lancekeeper.test", Value: ptr("1")}}})
		}, 3},
		{"ReserveFragments", func(r uint64) *Transaction { return NewReserveFragments(r, 1) }, 4},
		{"Restore v1", func(r uint64) *Transaction { return NewRestore(r, 1) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := latestVersion(t, st)
			r, err := Commit(ctx, st, tc.txn(read), Options{})
			if err != nil {
				t.Fatal(err)
			}
			src := readVersion(t, st, tc.from)
			got := readVersion(t, st, r.Version)
			if !bytes.Equal(got.Prelude, src.Prelude) {
				t.Fatalf("prelude of v%d (%d bytes) differs from v%d's (%d bytes)", r.Version, len(got.Prelude), tc.from, len(src.Prelude))
			}
			dicts := dictFields(got.Manifest)
			if len(dicts) != len(dictFields(src.Manifest)) {
				t.Fatalf("dictionary fields %v, want those of v%d", dicts, tc.from)
			}
			data := readManifestBytes(t, st, r.ManifestPath)
			for id, d := range dicts {
				if !proto.Equal(d, dictFields(src.Manifest)[id]) {
					t.Errorf("field %d: dictionary %v, v%d had %v", id, d, tc.from, dictFields(src.Manifest)[id])
				}
				vals, err := legacyDictionary(data, d)
				if err != nil || !slices.Equal(vals, want) {
					t.Errorf("field %d in v%d: dictionary %q, %v; want %q", id, r.Version, vals, err, want)
				}
			}
			// The sections start right after the prelude.
			if tr := got.Manifest.TransactionSection; tr == nil || *tr != uint64(len(got.Prelude)) {
				t.Errorf("transaction section at %v, want %d (right after the prelude)", tr, len(got.Prelude))
			}
		})
	}
	t.Run("Overwrite without the dictionary field", func(t *testing.T) {
		read := latestVersion(t, st)
		var fields []*pb.Field
		for _, f := range readVersion(t, st, read).Manifest.GetFields() {
			if f.GetDictionary().GetLength() == 0 && f.GetParentId() == -1 && f.GetLogicalType() == "int64" {
				fields = append(fields, proto.Clone(f).(*pb.Field))
			}
		}
		r := mustCommit(t, st, NewOverwrite(read, OverwriteSpec{Schema: fields}), Options{})
		if got := readVersion(t, st, r.Version); len(got.Prelude) != 0 || got.Manifest.GetTransactionSection() != 0 {
			t.Fatalf("v%d: prelude of %d bytes without any dictionary field", r.Version, len(got.Prelude))
		}
	})
}

// TestSpec3_6_ShallowCloneCarriesDictionaryPrelude: the first manifest of a
// clone of a legacy dictionary table carries the source prelude when the
// caller passes it (CloneSpec.SourcePrelude).
func TestSpec3_6_ShallowCloneCarriesDictionaryPrelude(t *testing.T) {
	srcDir, src := legacyDictDataset(t)
	f := readVersion(t, src, 3)
	dst := localStoreAt(t, mkdir(t, filepath.Join(t.TempDir(), "clone.lance")))
	r := mustCommit(t, dst, NewClone(CloneSpec{Source: f.Manifest, SourceIndices: f.Indices(), SourcePrelude: f.Prelude,
		Shallow: true, RefVersion: 3, RefPath: srcDir}), Options{})
	got := readVersion(t, dst, r.Version)
	if !bytes.Equal(got.Prelude, f.Prelude) {
		t.Fatalf("clone prelude %d bytes, source %d", len(got.Prelude), len(f.Prelude))
	}
	data := readManifestBytes(t, dst, r.ManifestPath)
	for id, d := range dictFields(got.Manifest) {
		if vals, err := legacyDictionary(data, d); err != nil || !slices.Equal(vals, []string{"red", "green", "blue"}) {
			t.Errorf("field %d: dictionary %q, %v", id, vals, err)
		}
	}
}

// TestLance12_LegacyDictionaryAfterOurCommits: after our UpdateConfig and
// Restore on a legacy-storage table, real Lance 12 still reads the
// dictionary column, with the same values as before our commits.
func TestLance12_LegacyDictionaryAfterOurCommits(t *testing.T) {
	peer := peerlance.ServeForTest(t)
	ctx := context.Background()
	dir, st := legacyDictDataset(t)
	type rows struct {
		Version uint64  `json:"version"`
		Rows    [][]any `json:"rows"`
	}
	read := func(version uint64) rows {
		t.Helper()
		var out rows
		if err := peer.RunJSON(ctx, &out, "rows", dir, "--version", fmt.Sprint(version), "--column", "id", "--column", "dict_utf8"); err != nil {
			t.Fatalf("Lance reads version %d: %v", version, err)
		}
		return out
	}
	before3, before1 := read(3), read(1)
	mustCommit(t, st, NewUpdateConfig(3, UpdateConfigSpec{Config: []ConfigChange{{Key: "lancekeeper.test", Value: ptr("1")}}}), Options{})
	mustCommit(t, st, NewRestore(4, 1), Options{})
	for _, tc := range []struct {
		version uint64
		want    rows
	}{{4, before3}, {5, before1}} {
		got := read(tc.version)
		if fmt.Sprint(got.Rows) != fmt.Sprint(tc.want.Rows) || len(got.Rows) == 0 {
			t.Errorf("Lance reads version %d as %v, want %v", tc.version, got.Rows, tc.want.Rows)
		}
	}
}
