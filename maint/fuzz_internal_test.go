package maint

import (
	"errors"
	"slices"
	"testing"
)

// FuzzDecodeRowIDs: hostile row id and version sequences (fragment
// metadata) decode to exactly rows values or fail with ErrCorruptRowIDs —
// never a panic, never more than rows values allocated; what encodeRowIDs
// writes decodes back to the same ids.
func FuzzDecodeRowIDs(f *testing.F) {
	for _, ids := range [][]uint64{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 9, 100, 101, 102, 103, 104, 7}, {1 << 40}} {
		b, _ := encodeRowIDs(ids)
		f.Add(b, uint64(len(ids)))
	}
	v, _ := encodeVersions([]uint64{1, 1, 2, 2, 2, 9})
	f.Add(v, uint64(6))
	// The Lance 12 examples of §3.5: a Range 0..10, one version run.
	f.Add([]byte{0x0a, 0x04, 0x0a, 0x02, 0x10, 0x0a}, uint64(10))
	f.Add([]byte{0x0a, 0x08, 0x0a, 0x04, 0x0a, 0x02, 0x10, 0x0a, 0x10, 0x01}, uint64(10))
	f.Fuzz(func(t *testing.T, data []byte, rows uint64) {
		rows %= 1 << 16
		if ids, err := decodeRowIDs(data, rows); err == nil {
			if uint64(len(ids)) != rows {
				t.Fatalf("%d ids for %d rows", len(ids), rows)
			}
			b, err := encodeRowIDs(ids)
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeRowIDs(b, rows)
			if err != nil || !slices.Equal(back, ids) {
				t.Fatalf("round trip: %v", err)
			}
		} else if !errors.Is(err, ErrCorruptRowIDs) {
			t.Fatalf("untyped error %v", err)
		}
		if vs, err := decodeVersions(data, rows); err == nil && uint64(len(vs)) != rows {
			t.Fatalf("%d versions for %d rows", len(vs), rows)
		} else if err != nil && !errors.Is(err, ErrCorruptRowIDs) {
			t.Fatalf("untyped error %v", err)
		}
	})
}
