package indexfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

const (
	uuidV2 = "d32dac97-985b-4628-b1b4-e4b64947e115" // built at version 1 over fragments 0-9
	uuidV5 = "f358a219-95e8-4956-be35-0835f2bed10f" // 0.8.14's optimize at version 4
)

func corpusIndex(t testing.TB, uuid string) []byte {
	t.Helper()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(corpus, "historical", "0.8.14", "corrupt_index", "_indices", uuid, "index.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLegacyFragments_Corpus_5_2e: the two legacy IVF_PQ files of the
// Lance 0.8.14 corrupt_index table. The index 0.8.14's optimize wrote
// still holds the rows of fragment 0, deleted before it ran, which the
// manifest's bitmap leaves out and Lance's recompute puts back (Lance's
// own test of that table asserts the recomputed bitmap contains 0).
func TestLegacyFragments_Corpus_5_2e(t *testing.T) {
	for _, tc := range []struct {
		uuid  string
		frags string
		rows  uint64
		dv    uint64
	}{
		{uuidV2, "[0 1 2 3 4 5 6 7 8 9]", 1000, 1},
		{uuidV5, "[0 1 2 3 4 5 6 7 8 9 10]", 2000, 4},
	} {
		b := corpusIndex(t, tc.uuid)
		bm, lv, err := ReadLegacyFragments(bytes.NewReader(b), int64(len(b)), tc.uuid)
		if err != nil {
			t.Fatal(err)
		}
		var rows uint64
		for _, p := range lv.Partitions {
			rows += uint64(p.Rows)
		}
		if got := fmt.Sprint(bm.ToArray()); got != tc.frags || rows != tc.rows || lv.DatasetVersion != tc.dv ||
			fmt.Sprint(lv.Stages) != "[IVF PQ]" || lv.NumSubVectors != 16 || lv.Name != "vector_idx" || fmt.Sprint(lv.Columns) != "[vector]" {
			t.Errorf("%s: fragments %s, %d rows, %+v", tc.uuid, got, rows, lv)
		}
	}
}

// legacyFile builds a legacy index file: partitions (row ids each, with
// sub PQ code bytes a row) then the Index message and the footer.
func legacyFile(sub int, parts [][]uint64, stages ...[]byte) []byte {
	var out []byte
	var offsets, lengths []byte
	for _, ids := range parts {
		offsets = protowire.AppendVarint(offsets, uint64(len(out)))
		lengths = protowire.AppendVarint(lengths, uint64(len(ids)))
		out = append(out, make([]byte, sub*len(ids))...)
		for _, id := range ids {
			out = binary.LittleEndian.AppendUint64(out, id)
		}
	}
	if stages == nil {
		var ivf []byte
		ivf = protowire.AppendTag(ivf, 2, protowire.BytesType)
		ivf = protowire.AppendBytes(ivf, offsets)
		ivf = protowire.AppendTag(ivf, 3, protowire.BytesType)
		ivf = protowire.AppendBytes(ivf, lengths)
		var pq []byte
		pq = protowire.AppendTag(pq, 2, protowire.VarintType)
		pq = protowire.AppendVarint(pq, uint64(sub))
		stages = [][]byte{stage(2, ivf), stage(3, pq)}
	}
	var vec []byte
	for _, s := range stages {
		vec = protowire.AppendTag(vec, 3, protowire.BytesType)
		vec = protowire.AppendBytes(vec, s)
	}
	var idx []byte
	idx = protowire.AppendTag(idx, 1, protowire.BytesType)
	idx = protowire.AppendString(idx, "v_idx")
	idx = protowire.AppendTag(idx, 5, protowire.BytesType)
	idx = protowire.AppendBytes(idx, vec)
	pos := len(out)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(idx)))
	out = append(out, idx...)
	out = binary.LittleEndian.AppendUint64(out, uint64(pos))
	out = binary.LittleEndian.AppendUint16(out, 0)
	out = binary.LittleEndian.AppendUint16(out, 1)
	return append(out, "LANC"...)
}

func stage(kind protowire.Number, body []byte) []byte {
	var s []byte
	s = protowire.AppendTag(s, kind, protowire.BytesType)
	return protowire.AppendBytes(s, body)
}

// TestLegacyFragments_Rules: the fragment of a row id is its upper 32
// bits; the stage shapes Lance cannot recompute are ErrUnsupported;
// damaged bytes are ErrCorrupt.
func TestLegacyFragments_Rules(t *testing.T) {
	good := legacyFile(4, [][]uint64{{3<<32 | 7, 1 << 32}, {}, {9<<32 | 1}})
	bm, _, err := ReadLegacyFragments(bytes.NewReader(good), int64(len(good)), "good")
	if err != nil || fmt.Sprint(bm.ToArray()) != "[1 3 9]" {
		t.Fatalf("fragments %v, %v; want [1 3 9]", bm, err)
	}
	pq := stage(3, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 4))
	ivf := stage(2, nil)
	v2 := append([]byte(nil), good...)
	binary.LittleEndian.PutUint16(v2[len(v2)-6:], 3)
	shortPart := legacyFile(4, [][]uint64{{1, 2}})
	shortPart = append(shortPart[:0:0], shortPart[20:]...) // partition offsets now point past their rows
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"v3 index file", v2, ErrUnsupported},
		{"PQ only", legacyFile(4, nil, pq), ErrUnsupported},
		{"PQ before IVF", legacyFile(4, nil, pq, ivf), ErrUnsupported},
		{"DiskANN", legacyFile(4, nil, stage(5, nil)), ErrUnsupported},
		{"no stages", legacyFile(4, nil, stage(1, nil)), ErrUnsupported},
		{"short file", []byte("LANC"), ErrCorrupt},
		{"bad magic", append(good[:len(good)-4:len(good)-4], "LANX"...), ErrCorrupt},
		{"truncated", good[len(good)/2:], ErrCorrupt},
		{"partition past the end", shortPart, ErrCorrupt},
	} {
		_, _, err := ReadLegacyFragments(bytes.NewReader(tc.b), int64(len(tc.b)), tc.name)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// FuzzLegacyFragments: any bytes give a bitmap or a typed error, never a
// panic or an allocation beyond the file. Seeds: both corpus files and
// synthetic ones.
func FuzzLegacyFragments(f *testing.F) {
	f.Add(corpusIndex(f, uuidV2))
	f.Add(corpusIndex(f, uuidV5))
	f.Add(legacyFile(4, [][]uint64{{3<<32 | 7, 1 << 32}, {}, {9<<32 | 1}}))
	f.Add(legacyFile(2, [][]uint64{{1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		bm, lv, err := ReadLegacyFragments(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if bm == nil || lv == nil {
			t.Fatal("nil result without error")
		}
	})
}
