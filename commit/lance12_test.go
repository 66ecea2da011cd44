package commit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// TestLance12_InterleavedCommits alternates commits by this package and by
// real Lance 12 (through the node peer) on one dataset: our create (2.0
// data files), Lance append, our deletes (.arrow and .bin deletion files),
// config change and fragment reservation, a Lance delete on top of our
// deletion file, our append on top of Lance's commits. Lance counts the rows
// we expect at every step; after our explicit seed activation Lance refuses
// the dataset with its unsupported-flags error naming 65537 = bit 16 + bit
// 0 (R55).
func TestLance12_InterleavedCommits(t *testing.T) {
	peer := peerlance.ServeForTest(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ds.lance")
	st := localStoreAt(t, mkdir(t, dir))
	count := func(want int) {
		t.Helper()
		var out struct {
			Version  uint64 `json:"version"`
			RowCount int    `json:"row_count"`
		}
		if err := peer.RunJSON(ctx, &out, "count", dir); err != nil {
			t.Fatalf("Lance count: %v", err)
		}
		if out.RowCount != want {
			t.Fatalf("Lance counts %d rows at version %d, want %d", out.RowCount, out.Version, want)
		}
	}
	// v1: 12000 rows in two 6000-row fragments, x = 0..11999.
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 12, 1000, 0), WriteOptions{Mode: ModeCreate, MaxRowsPerFile: 6000}); err != nil {
		t.Fatal(err)
	}
	count(12000)
	// v2: Lance appends 2 rows.
	data := filepath.Join(t.TempDir(), "rows.json")
	os.WriteFile(data, []byte(`[{"x": 100000, "s": "lance"}, {"x": 100001, "s": "lance"}]`), 0o644)
	if _, err := peer.Run(ctx, "append", dir, "--data", data); err != nil {
		t.Fatal(err)
	}
	count(12002)
	// v3: our delete, 3 rows of fragment 0 (.arrow) and 5500 of fragment 1 (.bin).
	big := roaring.New()
	big.AddRange(0, 5500)
	r := mustCommit(t, st, mustDelete(t, st, 2, map[uint64]*roaring.Bitmap{0: bitmapOf(1, 2, 3), 1: big}), Options{})
	if ft := r.Manifest.GetFragments()[1].GetDeletionFile().GetFileType().String(); ft != "BITMAP" {
		t.Fatalf("large delete wrote %s", ft)
	}
	count(12002 - 5503)
	// v4, v5: config and a fragment reservation.
	mustCommit(t, st, NewUpdateConfig(3, UpdateConfigSpec{Config: []ConfigChange{{Key: "lancekeeper.test", Value: ptr("1")}}}), Options{})
	mustCommit(t, st, NewReserveFragments(4, 2), Options{})
	count(12002 - 5503)
	// v6: Lance deletes on top of our .arrow deletion file (x = 4 is row 4 of fragment 0).
	if _, err := peer.Run(ctx, "delete", dir, "--where", "x = 4 OR x = 2"); err != nil {
		t.Fatal(err)
	}
	count(12002 - 5504)
	// v7: our append after Lance's commits.
	wr, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 200000), WriteOptions{Mode: ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	if wr.Version != 7 || wr.FragmentIDs[0] <= 4 {
		t.Fatalf("append: version %d ids %v (2 ids were reserved)", wr.Version, wr.FragmentIDs)
	}
	count(12002 - 5504 + 10)
	// Lance keeps our config through its own commits.
	if m := readVersion(t, st, 7).Manifest; m.GetConfig()["lancekeeper.test"] != "1" {
		t.Fatalf("config lost: %v", m.GetConfig())
	}
	// v8: explicit activation; Lance 12 must now refuse the dataset.
	if _, already, err := EnableZoneWriteSeeds(ctx, st, Options{}); err != nil || already {
		t.Fatal(err, already)
	}
	_, err = peer.Run(ctx, "count", dir)
	var le *peerlance.LanceError
	if !errors.As(err, &le) || !strings.Contains(le.Message, "cannot be read by this version of Lance") || !strings.Contains(le.Message, "Flags: 65537") {
		t.Fatalf("Lance 12 on a flagged dataset: %v", err)
	}
}

func mkdir(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
