package inspect

import (
	"math"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// TestItem10_PhysicalRowsSumIsChecked is issue 15 item 10: two fragments
// of 2^64-1 rows summed to a wrapped-around 2^64-2 (shown as a healthy
// count); the sum is checked and the overflow reported.
func TestItem10_PhysicalRowsSumIsChecked(t *testing.T) {
	m := &pb.Manifest{Version: 1, Fragments: []*pb.DataFragment{
		{Id: 0, PhysicalRows: math.MaxUint64}, {Id: 1, PhysicalRows: math.MaxUint64},
	}}
	s := FromFile(&manifest.File{Manifest: m})
	if s.PhysicalRowsError == "" || s.PhysicalRows != 0 {
		t.Fatalf("physical rows %d, error %q", s.PhysicalRows, s.PhysicalRowsError)
	}
	m.Fragments[1].PhysicalRows = 5
	m.Fragments[0].PhysicalRows = 3
	if s := FromFile(&manifest.File{Manifest: m}); s.PhysicalRows != 8 || s.PhysicalRowsError != "" {
		t.Fatalf("healthy sum: %d %q", s.PhysicalRows, s.PhysicalRowsError)
	}
}
